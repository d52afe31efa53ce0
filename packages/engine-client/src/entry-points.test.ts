import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const sourceRoot = dirname(fileURLToPath(import.meta.url));

/** Every module reachable from an entry by relative imports, with its import specifiers. */
function reachable(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const queue = [resolve(sourceRoot, entry)];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    const text = readFileSync(file, "utf8");
    const specifiers = [
      ...text.matchAll(/(?:import|export)[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g),
    ].map((match) => (match[1] ?? match[2]) as string);
    seen.set(file, specifiers);
    for (const specifier of specifiers) {
      if (specifier.startsWith(".")) queue.push(join(dirname(file), specifier.replace(/\.js$/, ".ts")));
    }
  }
  return seen;
}

describe("package entry points", () => {
  it.each(["index.ts", "context-entry.ts", "providers-entry.ts", "kit-entry.ts", "mock/index.ts"])(
    "given %s, should reach no Node built-in and no React",
    (entry) => {
      const offenders: string[] = [];
      for (const [file, specifiers] of reachable(entry)) {
        for (const specifier of specifiers) {
          if (
            /^node:/.test(specifier) ||
            /^(fs|path|http|https|os|child_process|crypto|stream|url|net)$/.test(specifier)
          ) {
            offenders.push(`${file}: ${specifier}`);
          }
          if (/^react(-dom)?(\/|$)/.test(specifier)) offenders.push(`${file}: ${specifier}`);
        }
      }
      expect(offenders).toEqual([]);
    },
  );
});
