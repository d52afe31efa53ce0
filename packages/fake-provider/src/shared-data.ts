import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
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
 * The shared test data: `shared/data` beside the repository's folder (in CI too), found from the repository's
 * root rather than by counting folders up from a file, so that moving a file cannot break it.
 * `CONCH_SHARED_DATA_DIR` points it elsewhere (an e2e test points it at an empty folder to prove that the demo
 * needs none of it).
 */
export const sharedDataDirectory = process.env.CONCH_SHARED_DATA_DIR
  ? resolve(process.env.CONCH_SHARED_DATA_DIR)
  : resolve(repositoryRoot, "..", "shared", "data");

/** A path inside the shared test data, e.g. `sharedDataPath("token-corpus", "train.jsonl")`. */
export function sharedDataPath(...segments: string[]): string {
  return join(sharedDataDirectory, ...segments);
}
