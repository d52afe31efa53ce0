// What each adapter entry point adds to a page that already has the core: its own folder's modules, minified
// and gzipped, with every package (peers, dependencies, our other packages) and the core's modules it shares
// outside (the app has them already). The core entries never import an adapter, so they carry none of it.
import { readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { gzipSync } from "node:zlib";
import { transform } from "esbuild";
import { build, defaultClientConditions } from "vite";

/** The adapter entries, by the name a user imports. One line each. */
export const adapterEntries = [
  { name: "@conch/nacre/assistant-ui", source: "packages/nacre/src/assistant-ui/index.ts" },
  { name: "@conch/nacre/command", source: "packages/nacre/src/command/index.ts" },
  { name: "@conch/nacre/chats", source: "packages/nacre/src/chats/index.ts" },
  { name: "@conch/nacre/branches", source: "packages/nacre/src/branches/index.ts" },
] as const;

export interface BundleSize {
  readonly jsMinifiedBytes: number;
  readonly jsGzipBytes: number;
}

export interface AdapterSize extends BundleSize {
  readonly name: string;
}

/**
 * One entry built as a library (ES, under the `source` condition) into `outDir`, what `isExternal` says left
 * out; its size minified and gzipped. Vite's library build keeps whitespace in ES output (so that the bundler
 * downstream still sees its annotations), so the bundle is minified whole afterwards, as an app's production
 * build minifies it.
 */
export async function libraryBundleSize(
  entry: string,
  outDir: string,
  isExternal: (id: string, importer: string | undefined) => boolean,
): Promise<BundleSize> {
  await build({
    configFile: false,
    logLevel: "silent",
    resolve: { conditions: ["source", ...defaultClientConditions] },
    build: {
      outDir,
      emptyOutDir: true,
      minify: true,
      lib: { entry, formats: ["es"], fileName: "bundle" },
      rolldownOptions: {
        external: isExternal,
        onwarn(warning, warn) {
          if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
        },
      },
    },
  });
  const built = readFileSync(join(outDir, "bundle.js"), "utf8");
  const js = Buffer.from((await transform(built, { minify: true, format: "esm", target: "es2022" })).code);
  return { jsMinifiedBytes: js.length, jsGzipBytes: gzipSync(js, { level: 9 }).length };
}

export async function adapterEntrySizes(repoRoot: string, work: string): Promise<AdapterSize[]> {
  const sizes: AdapterSize[] = [];
  for (const [index, entry] of adapterEntries.entries()) {
    const file = join(repoRoot, entry.source);
    const folder = dirname(file);
    const size = await libraryBundleSize(file, join(work, `adapter-${index}`), (id, importer) => {
      if (!id.startsWith(".") && !id.startsWith("/")) return true;
      const target = importer && id.startsWith(".") ? resolve(dirname(importer), id) : id;
      return !target.startsWith(folder + sep);
    });
    sizes.push({ name: entry.name, ...size });
  }
  return sizes;
}
