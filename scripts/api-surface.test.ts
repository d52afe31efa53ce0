import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bare, entryPoints, exportedNames, readList, repositoryRoot, updateCommand } from "./api-surface.js";

const entries = entryPoints();
const names = exportedNames(entries);
const label = (entry: (typeof entries)[number]) => `${entry.packageName} ${entry.subpath}`;

/** README.md and every docs/*.md, where each public name must be written down. */
function documentation(): string {
  const docs = join(repositoryRoot, "docs");
  const files = [
    join(repositoryRoot, "README.md"),
    ...readdirSync(docs)
      .filter((file) => file.endsWith(".md"))
      .map((file) => join(docs, file)),
  ];
  return files.map((file) => readFileSync(file, "utf8")).join("\n");
}

/**
 * Whether a name is written down: as itself, as the props of a documented component (`XProps`), or as a compound
 * part's long name (`SummaryDividerRoot` for `SummaryDivider.Root`).
 */
function isDocumented(name: string, text: string): boolean {
  if (new RegExp(`\\b${name}\\b`).test(text)) return true;
  if (name.endsWith("Props") && isDocumented(name.slice(0, -"Props".length), text)) return true;
  for (let index = 1; index < name.length; index++) {
    if (!/[A-Z]/.test(name[index] as string)) continue;
    if (new RegExp(`\\b${name.slice(0, index)}\\.${name.slice(index)}\\b`).test(text)) return true;
  }
  return false;
}

describe("the public surface (packages/*/api-surface/*.txt)", () => {
  it.each(entries.map((entry) => [label(entry), entry] as const))(
    "given %s, should export exactly the names of its checked-in list",
    (_label, entry) => {
      const exported = names.get(entry) ?? [];
      const listed = readList(entry);
      const added = exported.filter((name) => !listed.includes(name));
      const removed = listed.filter((name) => !exported.includes(name));
      expect(
        { added, removed },
        `${label(entry)} changed its exports. If that is on purpose, run \`${updateCommand}\`, commit ${entry.listFile.slice(repositoryRoot.length + 1)} and document the new names.`,
      ).toEqual({ added: [], removed: [] });
    },
  );

  it("should keep no list for an entry point that is gone", () => {
    const expected = new Set(entries.map((entry) => entry.listFile));
    const stale = [...new Set(entries.map((entry) => join(entry.packageDir, "api-surface")))]
      .filter((folder) => existsSync(folder))
      .flatMap((folder) => readdirSync(folder).map((file) => join(folder, file)))
      .filter((file) => !expected.has(file));
    expect(stale, `Run \`${updateCommand}\` to remove them.`).toEqual([]);
  });

  it("should name every export of an entry point in it, with no `export *`", () => {
    // `export * as Composer from …` names a namespace and is fine; `export * from …` hides the list.
    const hiding = entries.filter((entry) =>
      /^\s*export\s+(type\s+)?\*\s+from/m.test(readFileSync(entry.sourceFile, "utf8")),
    );
    expect(hiding.map(label)).toEqual([]);
  });

  it("given @conch/engine-client, should export at most 118 names from its root (half of the 237 it had)", () => {
    const root = entries.find((entry) => entry.packageName === "@conch/engine-client" && entry.subpath === ".");
    expect(names.get(root!)?.length).toBeLessThanOrEqual(118);
  });

  it("given a published package, should document every exported name in README.md or docs/*.md", () => {
    const text = documentation();
    const undocumented = entries
      .filter((entry) => !entry.private)
      .flatMap((entry) =>
        (names.get(entry) ?? [])
          .map(bare)
          .filter((name) => !isDocumented(name, text))
          .map((name) => `${label(entry)}: ${name}`),
      );
    expect(undocumented).toEqual([]);
  });
});
