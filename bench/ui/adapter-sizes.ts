// What each adapter entry point adds to a page that already has the core: its own folder's modules, minified
// and gzipped, with every package (peers, dependencies, our other packages) and the core's modules it shares
// outside (the app has them already). The core entries never import an adapter, so they carry none of it.
import { readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { gzipSync } from "node:zlib";
import { build, defaultClientConditions } from "vite";

/** The adapter entries, by the name a user imports. One line each. */
export const adapterEntries = [
  { name: "@conch/nacre/assistant-ui", source: "packages/nacre/src/assistant-ui/index.ts" },
] as const;

export interface AdapterSize {
  readonly name: string;
  readonly jsMinifiedBytes: number;
  readonly jsGzipBytes: number;
}

export async function adapterEntrySizes(repoRoot: string, work: string): Promise<AdapterSize[]> {
  const sizes: AdapterSize[] = [];
  for (const [index, entry] of adapterEntries.entries()) {
    const file = join(repoRoot, entry.source);
    const folder = dirname(file);
    const outDir = join(work, `adapter-${index}`);
    await build({
      configFile: false,
      logLevel: "silent",
      resolve: { conditions: ["source", ...defaultClientConditions] },
      build: {
        outDir,
        emptyOutDir: true,
        minify: true,
        lib: { entry: file, formats: ["es"], fileName: "adapter" },
        rolldownOptions: {
          external: (id, importer) => {
            if (!id.startsWith(".") && !id.startsWith("/")) return true;
            const target = importer && id.startsWith(".") ? resolve(dirname(importer), id) : id;
            return !target.startsWith(folder + sep);
          },
          onwarn(warning, warn) {
            if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
          },
        },
      },
    });
    const js = readFileSync(join(outDir, "adapter.js"));
    sizes.push({ name: entry.name, jsMinifiedBytes: js.length, jsGzipBytes: gzipSync(js, { level: 9 }).length });
  }
  return sizes;
}
