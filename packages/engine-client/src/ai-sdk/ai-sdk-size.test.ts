import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../index.ts", import.meta.url));
const aiSdk = fileURLToPath(new URL("./index.ts", import.meta.url));

/** Minified and gzipped, with its dependencies but not `ai` (the app has it already: `useChat` needs it). */
async function bundle(contents: string) {
  const result = await build({
    stdin: { contents, resolveDir: fileURLToPath(new URL(".", import.meta.url)), loader: "ts" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    conditions: ["source"],
    external: ["ai"],
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]?.text ?? "";
  // What ended in the output: esbuild lists every module it read, shaken-off ones too.
  const output = Object.values(result.metafile.outputs)[0];
  const inputs = Object.entries(output?.inputs ?? {}).flatMap(([input, { bytesInOutput }]) =>
    bytesInOutput > 0 ? [input] : [],
  );
  return { gzipped: gzipSync(code, { level: 9 }).length, inputs };
}

describe("the ./ai-sdk entry's weight", () => {
  it("should add nothing to the core entry, and keep what a page imports from it small", async () => {
    const core = await bundle(`export * from ${JSON.stringify(root)};`);
    const entry = await bundle(`export * from ${JSON.stringify(aiSdk)};`);
    const page = await bundle(
      `export { createNacreTransport, nacreDivider, nacreSendMessagesRequest } from ${JSON.stringify(aiSdk)};`,
    );
    // A page on the route: the request, the stop on abort, the divider.
    const routePage = await bundle(
      `export { nacreChatFetch, nacreDivider, nacreSendMessagesRequest } from ${JSON.stringify(aiSdk)};`,
    );
    console.info(
      `gzipped: core ${core.gzipped} B, ./ai-sdk whole ${entry.gzipped} B, ./ai-sdk in a page ${page.gzipped} B, on the route ${routePage.gzipped} B`,
    );

    expect(core.inputs.filter((input) => input.includes("ai-sdk/"))).toEqual([]);
    // The page's part is the mapper, the planner and the transport: no schema library, no server code.
    expect(page.inputs.filter((input) => /zod|server\/|providers\/|node:/.test(input))).toEqual([]);
    expect(routePage.inputs.filter((input) => /zod|server\/|providers\/|node:|transport/.test(input))).toEqual([]);
    // The transport runs `/compact` too (the fold's message), about 1 KB of the page's part.
    expect(page.gzipped).toBeLessThan(4.5 * 1024);
    expect(routePage.gzipped).toBeLessThan(2 * 1024);
  });
});
