import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers.js";

const run = promisify(execFile);

/** Runs a repository script as `pnpm bench` / `pnpm simulate` do (node with the source condition and tsx). */
async function script(file: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ["--conditions=source", "--import", "tsx", file, ...args], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
}

// The command-line contracts: with --json, stdout carries exactly one JSON object and nothing else.
describe("the repository's command-line tools", () => {
  it("pnpm bench --json should print one JSON object with the figures the issue names", async () => {
    const { stdout, stderr } = await script("bench/run.ts", [
      "--json",
      "--quick",
      "--only",
      "planning,prompt-cache,estimate",
    ]);
    expect(stdout.trim().split("\n")).toHaveLength(1);
    const result = JSON.parse(stdout) as Record<string, unknown>;
    for (const key of ["planMsSteady600", "planMsCold600", "tokenizerRatio"]) expect(typeof result[key]).toBe("number");
    const cache = result.cache as Array<Record<string, unknown>>;
    expect(new Set(cache.map((row) => row.policy))).toEqual(new Set(["ours", "sliding", "half-keep20", "none"]));
    expect(new Set(cache.map((row) => row.window))).toEqual(new Set([8_000, 32_000, 128_000, 1_000_000]));
    for (const row of cache) {
      for (const key of [
        "reuse",
        "ceiling",
        "rewrittenShare",
        "reshorteningsPer100",
        "foldsPer100",
        "inputTokens",
        "inputTokensPerRequest",
        "cost",
        "maxRequestOverWindow",
      ]) {
        expect(typeof row[key]).toBe("number");
      }
      if (row.policy === "ours" || row.policy === "sliding") expect(row.requestsOverWindow).toBe(0);
    }
    expect((result.cacheSweep as unknown[]).length).toBeGreaterThan(0);
    // The tables went to stderr.
    expect(stderr).toContain("| policy");
  });

  it("pnpm simulate should print progress to stderr and one JSON object to stdout", async () => {
    const { stdout, stderr } = await script("scripts/simulate.ts", [
      "--conversation",
      "aider-ru.jsonl",
      "--window",
      "8000",
      "--refuse-once",
    ]);
    expect(stdout.trim().split("\n")).toHaveLength(1);
    const result = JSON.parse(stdout) as Record<string, number>;
    expect(Object.keys(result).sort()).toEqual(
      ["turns", "requests", "folds", "heals", "problems", "requestsOverWindow", "maxRequestTokens", "window"].sort(),
    );
    expect(result.window).toBe(8_000);
    expect(result.problems).toBe(0);
    expect(result.heals).toBeGreaterThanOrEqual(1);
    expect(stderr).toMatch(/^turn 1\/\d+: requests 1/m);
  });

  it("pnpm simulate should refuse a bad window with a clear message", async () => {
    await expect(
      script("scripts/simulate.ts", ["--conversation", "aider-ru.jsonl", "--window", "many"]),
    ).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--window must be a whole number"),
    });
  });
});
