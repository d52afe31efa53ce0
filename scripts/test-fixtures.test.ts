import { readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const thisFile = fileURLToPath(import.meta.url);

/** Folders never walked: installed or generated (as .gitignore lists them), git's own, and the fixtures' data. */
const skippedFolders = new Set([
  ".git",
  "node_modules",
  "dist",
  "storybook-static",
  "dev-dist",
  ".artifacts",
  ".vitest-reports",
  "coverage",
  ".vitest-attachments",
  ".nacre-data",
  "__screenshots__",
  "test-fixtures",
]);

/** Prose and data, where naming the bench's larger input is fine (docs/bench.md says what the bench reads). */
const unchecked = new Set([".md", ".jsonl", ".png", ".jpg", ".webp", ".gguf"]);

/** Every file of `folder` (relative to the repository's root, `/`-separated), less the folders `skipped` names. */
function filesUnder(folder: string, skipped: ReadonlySet<string> = new Set()): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = folder === "" ? entry.name : `${folder}/${entry.name}`;
    if (entry.isDirectory()) return skipped.has(entry.name) ? [] : filesUnder(path, skipped);
    return entry.isFile() ? [path] : [];
  });
}

/**
 * The data beside the repository (`../shared`) by any of its names: the bench's helpers, their variable, the
 * relative path, the folder's own paths, or a `join(root, "..", "shared", "data")`.
 */
const namesSharedData =
  /\bsharedData(?:Path|Directory)\b|CONCH_SHARED_DATA_DIR|\.\.\/shared\b|\/work\/shared\b|\bshared\/(?:data|models)\b|["']shared["']\s*,\s*["'](?:data|models)["']/;

describe("data beside the repository (../shared)", () => {
  // A clone of the project does not have it: tests, the demo and the library read test-fixtures/ instead.
  it("should be named by no code or config outside bench/ (bench/shared-data.ts reads it as a larger input)", () => {
    const offenders = filesUnder("", skippedFolders)
      .filter((path) => !path.startsWith("bench/") && join(root, path) !== thisFile)
      .filter((path) => !unchecked.has(extname(path)))
      .flatMap((path) =>
        readFileSync(join(root, path), "utf8")
          .split("\n")
          .flatMap((line, index) => (namesSharedData.test(line) ? [`${path}:${index + 1}: ${line.trim()}`] : [])),
      );
    expect(offenders).toEqual([]);
  });
});

describe("test-fixtures/README.md", () => {
  it("should name every file of test-fixtures/ (its source and licence are written there)", () => {
    const readme = readFileSync(join(root, "test-fixtures", "README.md"), "utf8");
    const files = filesUnder("test-fixtures")
      .map((path) => path.slice("test-fixtures/".length))
      .filter((path) => path !== "README.md");
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((path) => !readme.includes(`\`${path}\``))).toEqual([]);
  });
});
