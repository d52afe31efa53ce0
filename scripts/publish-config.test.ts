// The published manifests: `exports` carries the workspace-only `source` condition (the packages' TypeScript, read
// by Vite, Vitest and tsx here), which a tarball must not, since `src/` is not in it. `pnpm pack` and
// `pnpm publish` put `publishConfig.exports` in its place; it must be `exports` without `source`, entry for entry.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const repoRoot = join(import.meta.dirname, "..");
const published = ["packages/engine-client", "packages/nacre"] as const;

type Exports = Readonly<Record<string, string | Readonly<Record<string, string>>>>;

interface Manifest {
  readonly exports: Exports;
  readonly files: readonly string[];
  readonly publishConfig?: { readonly exports?: Exports };
}

function withoutSource(exports: Exports): Exports {
  return Object.fromEntries(
    Object.entries(exports).map(([subpath, target]) => [
      subpath,
      typeof target === "string"
        ? target
        : Object.fromEntries(Object.entries(target).filter(([condition]) => condition !== "source")),
    ]),
  );
}

describe.each(published)("%s/package.json as published", (packageDir) => {
  it("should publish its exports without the source condition, and its README and LICENSE", async () => {
    const manifest = JSON.parse(await readFile(join(repoRoot, packageDir, "package.json"), "utf8")) as Manifest;
    expect(manifest.publishConfig?.exports).toEqual(withoutSource(manifest.exports));
    expect(JSON.stringify(manifest.publishConfig?.exports)).not.toContain("./src/index");
    expect(manifest.files).toEqual(expect.arrayContaining(["README.md", "LICENSE"]));
  });
});
