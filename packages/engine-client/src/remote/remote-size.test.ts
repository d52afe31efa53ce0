import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const entry = fileURLToPath(new URL("./index.ts", import.meta.url));
const serverEntry = fileURLToPath(new URL("../server/index.ts", import.meta.url));

async function bundle(file: string, platform: "browser" | "neutral") {
  const result = await build({
    entryPoints: [file],
    bundle: true,
    minify: true,
    format: "esm",
    platform,
    conditions: ["source"],
    mainFields: ["module", "main"],
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  return { code: result.outputFiles[0]?.text ?? "", inputs: Object.keys(result.metafile.inputs) };
}

describe("the remote engine's bundle", () => {
  it("should stay under 8 KB gzipped with its dependencies, with no provider, schema library or Node built-in", async () => {
    const { code, inputs } = await bundle(entry, "browser");
    const gzipped = gzipSync(code, { level: 9 }).length;
    expect(gzipped).toBeLessThan(8 * 1024);
    expect(inputs.filter((input) => /zod|providers\/|summarise\/|context\/|node:/.test(input))).toEqual([]);
  });

  it("given the server entry, should need nothing but web standards (no Node built-in)", async () => {
    // platform "neutral" fails the build on any import of a Node built-in.
    const { inputs } = await bundle(serverEntry, "neutral");
    expect(inputs.some((input) => input.includes("server/handler.ts"))).toBe(true);
  });
});
