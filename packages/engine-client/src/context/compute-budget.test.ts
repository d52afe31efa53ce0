import { describe, expect, it } from "vitest";
import { type BudgetInput, computeBudget } from "./budget.js";

describe("computeBudget", () => {
  describe("given a window, the system prompt, the tools and the factor", () => {
    it.each([
      {
        name: "a 128K window",
        input: { window: 128_000, systemTokens: 2_000, toolTokens: 3_000 },
        expected: { budget: 94_200, uncapped: 94_200, answerRoom: 16_000, window: 128_000, room: "enough" },
      },
      {
        name: "a 1M window (the 100K cap applies)",
        input: { window: 1_000_000, systemTokens: 2_000, toolTokens: 3_000 },
        expected: { budget: 100_000, uncapped: 879_000, answerRoom: 16_000, window: 1_000_000, room: "enough" },
      },
      {
        name: "a 32K window",
        input: { window: 32_000, systemTokens: 2_000, toolTokens: 3_000 },
        expected: { budget: 19_000, uncapped: 19_000, answerRoom: 4_800, window: 32_000, room: "enough" },
      },
      {
        name: "an 8K window with a full prompt and tools (go lean)",
        input: { window: 8_000, systemTokens: 2_000, toolTokens: 3_000 },
        expected: { budget: 1_000, uncapped: 1_000, answerRoom: 1_200, window: 8_000, room: "too-small" },
      },
      {
        name: "an 8K window with a lean prompt",
        input: { window: 8_000, systemTokens: 500 },
        expected: { budget: 5_500, uncapped: 5_500, answerRoom: 1_200, window: 8_000, room: "enough" },
      },
      {
        name: "a window smaller than the system prompt",
        input: { window: 4_000, systemTokens: 6_000 },
        expected: { budget: 0, uncapped: -3_400, answerRoom: 1_000, window: 4_000, room: "too-small" },
      },
      {
        name: "a factor (prompt and tools × factor)",
        input: { window: 32_000, systemTokens: 2_000, toolTokens: 3_000, factor: 1.2 },
        expected: { budget: 18_000, uncapped: 18_000, answerRoom: 4_800, window: 32_000, room: "enough" },
      },
      {
        name: "a lowered answer room",
        input: { window: 32_000, systemTokens: 2_000, toolTokens: 3_000, answerRoom: 1_000 },
        expected: { budget: 22_800, uncapped: 22_800, answerRoom: 1_000, window: 32_000, room: "enough" },
      },
      {
        name: "nothing but a window",
        input: { window: 16_000 },
        expected: { budget: 12_000, uncapped: 12_000, answerRoom: 2_400, window: 16_000, room: "enough" },
      },
    ] satisfies { name: string; input: BudgetInput; expected: unknown }[])(
      "should budget $name",
      ({ input, expected }) => {
        expect(computeBudget(input)).toEqual(expected);
      },
    );
  });
});
