// The wire protocol is shared, not owned: the handler (server/) and the remote engine (remote/) both import it
// from protocol/, and neither imports the other, so the server never carries the page's code and the page's
// bundle never carries the server's schemas.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const sourceRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function filesUnder(folder: string): string[] {
  return readdirSync(join(sourceRoot, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(sourceRoot, folder, name));
}

/** The import specifiers of a file (static, re-exports and dynamic), relative ones resolved against `src/`. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)]
    .map((match) => (match[1] ?? match[2]) as string)
    .map((specifier) =>
      specifier.startsWith(".")
        ? relative(sourceRoot, join(dirname(file), specifier)).replaceAll("\\", "/")
        : specifier,
    );
}

function offenders(folder: string, forbidden: RegExp, options: { readonly tests: boolean }): string[] {
  const files = filesUnder(folder).filter((file) => options.tests || !/\.test(-d)?\.ts$/.test(file));
  return files.flatMap((file) =>
    importsOf(file)
      .filter((target) => forbidden.test(target))
      .map((target) => `${relative(sourceRoot, file)} imports ${target}`),
  );
}

describe("who imports the wire protocol", () => {
  it("should find server/ (tests and test helpers too) importing nothing from remote/", () => {
    expect(filesUnder("server").length).toBeGreaterThan(10);
    expect(offenders("server", /^remote\//, { tests: true })).toEqual([]);
  });

  it("should find remote/ importing nothing from server/ (its tests run one, on loopback)", () => {
    expect(offenders("remote", /^server\//, { tests: false })).toEqual([]);
  });

  it("should find protocol/ importing neither side, nor a schema library", () => {
    expect(offenders("protocol", /^(server|remote)\/|^zod/, { tests: true })).toEqual([]);
  });
});
