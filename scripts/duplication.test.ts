// The remote engine is built on the engine kit like every engine: no copy of the kit's plumbing (a listener list,
// a busy check, a turn's stream) may grow back in `remote/`, where a fix to the kit would miss it (issue #23).
// jscpd looks for code repeated across the two folders (copies within one folder are not this check's business).
import { cp, mkdir, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// jscpd 4.3.0's ESM build imports `colors/safe` without an extension, which Node refuses: its CommonJS build runs.
const { detectClones } = createRequire(import.meta.url)("jscpd") as typeof import("jscpd");

const source = join(import.meta.dirname, "..", "packages", "engine-client", "src");
/** The smallest clone that counts: 50 tokens, on however few lines. */
const minTokens = 50;

function clonesBetween(first: string, second: string) {
  return detectClones({
    path: [first, second],
    format: ["typescript"],
    minTokens,
    minLines: 1,
    skipLocal: true,
    silent: true,
    reporters: [],
    gitignore: false,
    noTips: true,
  });
}

describe("code repeated between remote/ and kit/", () => {
  const scratch = mkdtemp(join(tmpdir(), "duplication-"));
  afterAll(async () => rm(await scratch, { recursive: true, force: true }));

  it("given a kit file copied into another folder, should be found (the check can fail)", async () => {
    const root = await scratch;
    await mkdir(join(root, "kit"));
    await mkdir(join(root, "copy"));
    await cp(join(source, "kit", "turn-stream.ts"), join(root, "kit", "turn-stream.ts"));
    await cp(join(source, "kit", "turn-stream.ts"), join(root, "copy", "stream.ts"));
    expect((await clonesBetween(join(root, "kit"), join(root, "copy"))).length).toBeGreaterThan(0);
  });

  it(`should find no clone of ${minTokens} tokens or more`, async () => {
    const clones = await clonesBetween(join(source, "remote"), join(source, "kit"));
    const where = clones.map(
      (clone) =>
        `${clone.duplicationA.sourceId}:${clone.duplicationA.start.line} = ${clone.duplicationB.sourceId}:${clone.duplicationB.start.line}`,
    );
    expect(where).toEqual([]);
  });
});
