import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const sourceRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Every module an entry reaches by relative imports, and the bare specifiers it imports. */
function reach(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const queue = [resolve(sourceRoot, entry)];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (files.includes(file)) continue;
    files.push(file);
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(
      /(?:import|export)[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
    )) {
      const specifier = (match[1] ?? match[2]) as string;
      if (specifier.startsWith(".")) queue.push(join(dirname(file), specifier.replace(/\.js$/, ".ts")));
      else packages.add(specifier);
    }
  }
  return { files: files.map((file) => relative(sourceRoot, file)), packages };
}

describe("the postgres entry", () => {
  it("should stay out of the root entry, so no database code reaches a browser", () => {
    const { files } = reach("index.ts");
    expect(files.filter((file) => file.startsWith("postgres"))).toEqual([]);
  });

  it("should import neither driver: the host hands it a pg Pool or a PGlite instance", () => {
    const { files, packages } = reach("postgres/index.ts");
    expect(files).toContain(join("postgres", "postgres-store.ts"));
    expect([...packages].filter((name) => /^(pg|@electric-sql\/pglite)(\/|$)/.test(name))).toEqual([]);
  });
});
