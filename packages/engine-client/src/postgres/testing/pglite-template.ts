// Vitest globalSetup of the "postgres" project: the data folder of a new, empty PGlite cluster, made once per
// PGlite version and kept in the temp folder. Making one runs initdb in WASM (20 to 40 s on a busy machine);
// loading one takes a few seconds, so each test opens its own fresh cluster from it (testing/databases.ts).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile, rename, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** A tar of an empty PGlite cluster's data folder, for `new PGlite({ loadDataDir })`. */
    pgliteTemplate: string;
  }
}

export async function setup(project: TestProject): Promise<void> {
  // Its package.json is not exported; it sits above the entry's dist/ folder.
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const { version } = JSON.parse(await readFile(join(dirname(entry), "..", "package.json"), "utf8")) as {
    version: string;
  };
  const path = join(tmpdir(), `conch-pglite-empty-${version}.tar`);
  const present = await stat(path).then(
    (found) => found.size > 0,
    () => false,
  );
  if (!present) {
    // In a child process: PGlite's WASM runtime ends the process it runs in when it closes, and this is Vitest's.
    const partial = `${path}.${process.pid}-${randomBytes(4).toString("hex")}`;
    await run(process.execPath, ["--input-type=module", "-e", makeTemplate, partial], dirname(entry));
    await rename(partial, path);
  }
  project.provide("pgliteTemplate", path);
}

const makeTemplate = `
import { writeFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
const fresh = new PGlite();
await fresh.waitReady;
const dump = await fresh.dumpDataDir("none");
await writeFile(process.argv[1], new Uint8Array(await dump.arrayBuffer()));
process.exit(0);
`;

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: 300_000 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`making the empty PGlite cluster failed: ${error.message}\n${stderr}`)) : resolve(),
    );
  });
}
