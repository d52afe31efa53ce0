import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { initialFactor, raiseFactor } from "./factor.js";

describe("raiseFactor", () => {
  describe("given a response's real input tokens and the request's estimate", () => {
    it.each([
      { name: "a real count above the estimate", previous: 1, input: 1_200, estimate: 1_000, expected: 1.2 },
      {
        name: "a real count below the estimate (never lowered)",
        previous: 1,
        input: 800,
        estimate: 1_000,
        expected: 1,
      },
      { name: "a higher ratio than before", previous: 1.1, input: 1_500, estimate: 1_000, expected: 1.5 },
      {
        name: "a lower ratio than before (a cache counted less)",
        previous: 1.5,
        input: 100,
        estimate: 1_000,
        expected: 1.5,
      },
      { name: "no real count", previous: 1.2, input: 0, estimate: 1_000, expected: 1.2 },
      { name: "no estimate", previous: 1.2, input: 1_000, estimate: 0, expected: 1.2 },
      { name: "a count that is not a number", previous: 1.2, input: Number.NaN, estimate: 1_000, expected: 1.2 },
      {
        name: "a meaningless previous factor",
        previous: Number.NaN,
        input: 900,
        estimate: 1_000,
        expected: initialFactor,
      },
    ])("should handle $name", ({ previous, input, estimate, expected }) => {
      expect(raiseFactor(previous, input, estimate)).toBeCloseTo(expected, 10);
    });
  });

  describe("given any sequence of responses", () => {
    it("should never come down", () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1_000_000 }))),
          (responses) => {
            let factor = initialFactor;
            for (const [input, estimate] of responses) {
              const next = raiseFactor(factor, input, estimate);
              expect(next).toBeGreaterThanOrEqual(factor);
              factor = next;
            }
          },
        ),
      );
    });
  });
});
