import { describe, expect, it } from "vitest";
import { answerRoomFor } from "./budget.js";

describe("answerRoomFor", () => {
  describe("given a window", () => {
    it.each([
      { window: 512, expected: 128, why: "a small real window: a quarter, so that a prompt still fits" },
      { window: 2_000, expected: 500, why: "a quarter of a window under 4,000" },
      { window: 4_000, expected: 1_000, why: "15% is 600: raised to the minimum" },
      { window: 8_000, expected: 1_200, why: "15%" },
      { window: 32_000, expected: 4_800, why: "15%" },
      { window: 128_000, expected: 16_000, why: "15% is 19,200: capped" },
      { window: 1_000_000, expected: 16_000, why: "capped" },
    ])("should keep $expected tokens for $window ($why)", ({ window, expected }) => {
      expect(answerRoomFor(window)).toBe(expected);
    });
  });
});
