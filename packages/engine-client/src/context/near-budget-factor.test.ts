import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { learnFactors, nearBudgetShare, raiseNearBudgetFactor, sizingFactorForModel } from "./factor.js";

// The budget a request was sized to; half of it is where a request starts to teach the near-budget factor.
const budget = 6_000;

describe("raiseNearBudgetFactor", () => {
  describe("given a request below half the budget", () => {
    it("should learn nothing from it", () => {
      expect(raiseNearBudgetFactor(undefined, nearBudgetShare * budget - 1, 1_000, budget)).toBeUndefined();
      expect(raiseNearBudgetFactor(2.4, 2_999, 500, budget)).toBe(2.4);
    });
  });

  describe("given a request of half the budget or more", () => {
    it("should raise to its ratio, and never lower", () => {
      expect(raiseNearBudgetFactor(undefined, 3_700, 1_500, budget)).toBeCloseTo(3_700 / 1_500, 10);
      expect(raiseNearBudgetFactor(2.6, 3_700, 1_500, budget)).toBe(2.6);
    });
  });

  describe("given no usable budget", () => {
    it("should learn nothing", () => {
      expect(raiseNearBudgetFactor(undefined, 3_700, 1_500, 0)).toBeUndefined();
      expect(raiseNearBudgetFactor(2, 3_700, 1_500, Number.NaN)).toBe(2);
    });
  });
});

describe("learnFactors and sizingFactorForModel", () => {
  describe("given a medium request of one script, then a request near the budget of the chat's mix (#26)", () => {
    it("should size with the near-budget request's ratio, keeping `factor` and `sizingFactor` as they only rise", () => {
      const window = 8_000;
      // A Chinese turn of 1,200 real tokens (over an eighth of the window): 2.9× the estimate.
      const medium = learnFactors(null, {
        modelId: "m",
        inputTokens: 1_160,
        estimatedRequestTokens: 400,
        window,
        budget,
      });
      expect(sizingFactorForModel(medium, "m")).toBeCloseTo(2.9, 10);
      // Then English and tool output join it: half the budget and more runs 2.45×.
      const near = learnFactors(medium, {
        modelId: "m",
        inputTokens: 3_920,
        estimatedRequestTokens: 1_600,
        window,
        budget,
      });
      expect(near.factor).toBeCloseTo(2.9, 10);
      expect(near.sizingFactor).toBeCloseTo(2.9, 10);
      expect(near.nearBudgetFactor).toBeCloseTo(2.45, 10);
      expect(sizingFactorForModel(near, "m")).toBeCloseTo(2.45, 10);
      // Another model's record sizes nothing.
      expect(sizingFactorForModel(near, "other")).toBe(1);
    });
  });

  describe("given any sequence of reports", () => {
    it("should never lower any of the three figures", () => {
      const report = fc.record({
        inputTokens: fc.integer({ min: 1, max: 8_000 }),
        estimatedRequestTokens: fc.integer({ min: 1, max: 8_000 }),
      });
      fc.assert(
        fc.property(fc.array(report, { maxLength: 30 }), (reports) => {
          let recorded = learnFactors(null, {
            modelId: "m",
            inputTokens: 1,
            estimatedRequestTokens: 1,
            window: 8_000,
            budget,
          });
          for (const next of reports) {
            const raised = learnFactors(recorded, { modelId: "m", window: 8_000, budget, ...next });
            expect(raised.factor).toBeGreaterThanOrEqual(recorded.factor);
            expect(raised.sizingFactor ?? 0).toBeGreaterThanOrEqual(recorded.sizingFactor ?? 0);
            expect(raised.nearBudgetFactor ?? 0).toBeGreaterThanOrEqual(recorded.nearBudgetFactor ?? 0);
            recorded = raised;
          }
        }),
      );
    });
  });
});
