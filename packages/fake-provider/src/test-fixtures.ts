import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root: the nearest folder above this file that holds `pnpm-workspace.yaml`. */
function findRepositoryRoot(start: string): string {
  let folder = start;
  while (!existsSync(join(folder, "pnpm-workspace.yaml"))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error(`No pnpm-workspace.yaml above ${start}`);
    folder = parent;
  }
  return folder;
}

/** The repository's root folder (where `pnpm-workspace.yaml` is). */
export const repositoryRoot = findRepositoryRoot(dirname(fileURLToPath(import.meta.url)));

/**
 * The project's own recorded data: `test-fixtures/` at the repository's root (its README names each file's source
 * and licence). Tests, `pnpm dev` and `pnpm simulate` read only this, so a fresh clone runs them all; found from
 * the repository's root rather than by counting folders up from a file, so that moving a file cannot break it.
 */
export const testFixturesDirectory = join(repositoryRoot, "test-fixtures");

/** A path inside the test fixtures, e.g. `testFixturesPath("token-corpus", "train.jsonl")`. */
export function testFixturesPath(...segments: string[]): string {
  return join(testFixturesDirectory, ...segments);
}
