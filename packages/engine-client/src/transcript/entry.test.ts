import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const sourceFolder = fileURLToPath(new URL("..", import.meta.url));

/** Every module a file reaches through its relative imports, and the bare specifiers they import. */
async function reach(entry: string): Promise<{ files: string[]; specifiers: Set<string> }> {
  const files: string[] = [];
  const specifiers = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.includes(file)) continue;
    files.push(file);
    const source = await readFile(file, "utf8");
    for (const [, specifier] of source.matchAll(/(?:import|export)[^'"]*?from\s+["']([^"']+)["']/g)) {
      if (specifier === undefined) continue;
      if (specifier.startsWith(".")) queue.push(join(dirname(file), specifier.replace(/\.js$/, ".ts")));
      else specifiers.add(specifier);
    }
  }
  return { files: files.map((file) => relative(sourceFolder, file)), specifiers };
}

describe("the transcript module of the main entry", () => {
  it("should reach no Node built-in and no *.node.ts file, so it runs in a browser", async () => {
    const { files, specifiers } = await reach(join(sourceFolder, "transcript", "index.ts"));
    expect(files).toContain(join("transcript", "indexeddb-store.ts"));
    expect(files.filter((file) => file.endsWith(".node.ts"))).toEqual([]);
    const builtins = [...specifiers].filter(
      (specifier) => specifier.startsWith("node:") || builtinModules.includes(specifier.split("/")[0]!),
    );
    expect(builtins).toEqual([]);
  });

  it("should leave the file-system store to the node entry", async () => {
    const { files } = await reach(join(sourceFolder, "node.ts"));
    expect(files).toContain(join("transcript", "file-store.node.ts"));
  });
});
