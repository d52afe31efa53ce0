import { describe, expect, it } from "vitest";
import { isDoubtfulWindow, windowAfterSuccess } from "../providers/remembered-windows.js";
import { implausibleUsage, maximumPlausibleFactor } from "./factor.js";

describe("implausibleUsage (fault 7)", () => {
  it("should flag 3,000,000 input tokens on a 128K model, which no request could send", () => {
    expect(implausibleUsage({ inputTokens: 3_000_000, estimatedRequestTokens: 13, window: 128_000 })).toBe(
      "over-window",
    );
  });

  it("should flag a factor far beyond any tokenizer's, window unknown", () => {
    expect(implausibleUsage({ inputTokens: 230_769 * 13, estimatedRequestTokens: 13, window: undefined })).toBe(
      "factor-too-high",
    );
  });

  it("should accept ordinary reports, small windows included", () => {
    expect(implausibleUsage({ inputTokens: 1_300, estimatedRequestTokens: 1_000, window: 128_000 })).toBeNull();
    expect(implausibleUsage({ inputTokens: 500, estimatedRequestTokens: 400, window: 512 })).toBeNull();
    expect(
      implausibleUsage({ inputTokens: 1_000 * maximumPlausibleFactor, estimatedRequestTokens: 1_000, window: 1e6 }),
    ).toBeNull();
  });
});

describe("remembered windows against implausible refusals (fault 7)", () => {
  it("should doubt a 512-token window once the model has served 20,000 tokens, never on its own", () => {
    expect(isDoubtfulWindow(512, 20_000)).toBe(true);
    expect(isDoubtfulWindow(512, undefined)).toBe(false);
    expect(isDoubtfulWindow(512, 400)).toBe(false);
  });

  it("should raise a remembered window to what a later success served, and never lower it", () => {
    expect(windowAfterSuccess(512, 20_000)).toBe(20_000);
    expect(windowAfterSuccess(512, 300)).toBe(512);
    expect(windowAfterSuccess(undefined, 20_000)).toBeUndefined();
  });
});
