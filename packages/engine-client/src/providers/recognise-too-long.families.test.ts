import { readFileSync } from "node:fs";
import { testFixturesPath } from "@conch/fake-provider";
import { describe, expect, it } from "vitest";
import { recogniseTooLong } from "./recognise-too-long.js";

/** One collected body (`test-fixtures/README.md` says what the fields mean). */
interface CollectedBody {
  readonly id: string;
  readonly provider: string;
  readonly kind: "too-long" | "not-too-long";
  readonly family: string;
  readonly status: number | null;
  readonly body: string;
  readonly window: number | null;
  readonly source: string;
}

function load(name: string): readonly CollectedBody[] {
  return JSON.parse(readFileSync(testFixturesPath("refusals", name), "utf8")) as CollectedBody[];
}

const collected = load("too-long-bodies.json");
const heldBack = load("too-long-held-back.json");
const families = [...new Set(collected.map((entry) => entry.family))];

describe("recogniseTooLong on real bodies collected from public sources", () => {
  it("should have at least 40 too-long bodies, 10 near misses and a held-back part of 20, each with its source", () => {
    const all = [...collected, ...heldBack];
    expect(all.filter((entry) => entry.kind === "too-long").length).toBeGreaterThanOrEqual(40);
    expect(all.filter((entry) => entry.kind === "not-too-long").length).toBeGreaterThanOrEqual(10);
    expect(heldBack.length).toBeGreaterThanOrEqual(20);
    for (const entry of all) expect(entry.source, entry.id).toMatch(/^https:\/\//);
  });

  describe.each(families)("given the family %s", (family) => {
    const members = collected.filter((entry) => entry.family === family);
    it.each(members.map((entry) => [entry.id, entry] as const))(
      "should classify %s as the source does",
      (_id, entry) => {
        const refusal = recogniseTooLong(entry.provider, entry.status, entry.body);
        if (entry.kind === "not-too-long") {
          expect(refusal).toBeNull();
          return;
        }
        expect(refusal).not.toBeNull();
        expect(refusal?.window ?? null).toBe(entry.window);
      },
    );
  });

  describe("given a provider the library has no row for", () => {
    it("should classify every collected body the same as with its own provider id (one shared classifier)", () => {
      for (const entry of [...collected, ...heldBack]) {
        expect(recogniseTooLong("a-gateway-nobody-knows", entry.status, entry.body), entry.id).toEqual(
          recogniseTooLong(entry.provider, entry.status, entry.body),
        );
      }
    });
  });

  describe("given the held-back bodies (committed before this classifier, never tuned to)", () => {
    const tooLong = heldBack.filter((entry) => entry.kind === "too-long");
    const nearMisses = heldBack.filter((entry) => entry.kind === "not-too-long");

    it("should recognise at least 95% of the too-long ones", () => {
      const missed = tooLong.filter((entry) => recogniseTooLong(entry.provider, entry.status, entry.body) === null);
      expect(missed.map((entry) => entry.id)).toEqual([]);
      expect((tooLong.length - missed.length) / tooLong.length).toBeGreaterThanOrEqual(0.95);
    });

    it("should read the window of every one that names a window", () => {
      const named = tooLong.filter((entry) => entry.window !== null);
      const wrong = named.filter(
        (entry) => recogniseTooLong(entry.provider, entry.status, entry.body)?.window !== entry.window,
      );
      expect(wrong.map((entry) => entry.id)).toEqual([]);
    });

    it("should fire on none of the near misses", () => {
      const fired = nearMisses.filter((entry) => recogniseTooLong(entry.provider, entry.status, entry.body) !== null);
      expect(fired.map((entry) => entry.id)).toEqual([]);
    });
  });

  describe("given the wordings named in the issue that the engine used to miss", () => {
    it.each([
      ["vLLM V1", "The decoder prompt (length 9000) is longer than the maximum model length of 8192", 8192],
      ["TGI", "Input validation error: `inputs` must have less than 4096 tokens. Given: 5000", 4096],
      ["Moonshot", "Your request exceeded model token limit: 131072", 131072],
      ["DashScope", "Range of input length should be [1, 30720]", 30720],
      ["llama-cpp-python", "Requested tokens (600) exceed context window of 512", 512],
    ] as const)("should read %s's wording with its window", (_name, body, window) => {
      expect(recogniseTooLong("openai-compatible", 400, body)).toMatchObject({ window });
    });
  });
});
