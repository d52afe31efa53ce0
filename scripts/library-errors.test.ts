// The library's failures have one shape: every error it throws is a class of its errors module (a stable `name`
// and `isInstance`), and a failure a turn survives goes to `onError`, whose default is the one `console.` call.
// This reads the library code of @conch/engine-client and @conch/nacre (tests, `testing/` folders aside) with
// TypeScript's parser, so a comment or a string that mentions `Error(` or `console.` is not counted.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repositoryRoot } from "./api-surface.js";

const libraryRoots = ["packages/engine-client/src", "packages/nacre/src"];
/** Where error classes live; a plain `Error(` is allowed nowhere, these included (they extend `EngineClientError`). */
const errorModules = ["packages/engine-client/src/errors.ts", "packages/nacre/src/errors.ts"];
/** The one place that writes to the console: `defaultErrorHandler`. */
const consoleModule = "packages/engine-client/src/errors.ts";

function libraryFiles(folder: string): string[] {
  return readdirSync(join(repositoryRoot, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === "testing" || entry.name === "node_modules" ? [] : libraryFiles(path);
    if (!/\.tsx?$/.test(entry.name) || /\.(test|test-d|bench)\.tsx?$/.test(entry.name)) return [];
    return [path];
  });
}

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly code: string;
}

/** Calls of the global `Error` (with or without `new`) and uses of `console.`, by file and line. */
function findings(file: string): { readonly errorCalls: Finding[]; readonly consoleUses: Finding[] } {
  const text = readFileSync(join(repositoryRoot, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const errorCalls: Finding[] = [];
  const consoleUses: Finding[] = [];
  const at = (node: ts.Node): Finding => ({
    file,
    line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
    code: node.getText(source).slice(0, 80),
  });
  const visit = (node: ts.Node): void => {
    if (
      (ts.isCallExpression(node) || ts.isNewExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "Error"
    ) {
      errorCalls.push(at(node));
    }
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "console") {
      consoleUses.push(at(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { errorCalls, consoleUses };
}

const files = libraryRoots.flatMap(libraryFiles);
const all = files.map(findings);

describe("the library's errors (packages/engine-client/src, packages/nacre/src)", () => {
  it("should read the library's files and find its errors modules among them", () => {
    expect(files.length).toBeGreaterThan(100);
    for (const module of errorModules) expect(files).toContain(module);
    expect(files.some((file) => file.includes("/testing/") || /\.test\./.test(file))).toBe(false);
  });

  it("should throw no plain Error: each failure is a class of the errors module, with isInstance", () => {
    const found = all.flatMap((result) => result.errorCalls);
    expect(found, "Throw a class of packages/engine-client/src/errors.ts (or Nacre's errors.ts) instead").toEqual([]);
  });

  it("should write to the console only in defaultErrorHandler: everything else goes through onError", () => {
    const found = all.flatMap((result) => result.consoleUses).filter((use) => use.file !== consoleModule);
    expect(found, "Take an onError (ErrorHandler) and call it instead").toEqual([]);
    const own = all.flatMap((result) => result.consoleUses).filter((use) => use.file === consoleModule);
    expect(own.map((use) => use.code)).toEqual([expect.stringMatching(/^console\.error/)]);
  });

  it("should need no biome-ignore for an error class", () => {
    const ignored = files.filter((file) =>
      /biome-ignore lint\/correctness\/noUnusedPrivateClassMembers/.test(
        readFileSync(join(repositoryRoot, file), "utf8"),
      ),
    );
    expect(ignored).toEqual([]);
  });
});
