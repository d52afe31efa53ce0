import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { defaultTokenEstimator } from "./estimate.js";
import { createEstimateCache, estimateMessageTokens } from "./message-estimate.js";

const thinking: ChatMessage = {
  seq: 1,
  role: "assistant",
  parts: [
    { type: "thinking", text: "let me think about this" },
    { type: "text", text: "ok" },
  ],
};

describe("createEstimateCache", () => {
  describe("given no options", () => {
    it("should count with the default estimator and count only signed thinking", () => {
      const cache = createEstimateCache();
      expect(cache.estimator).toBe(defaultTokenEstimator);
      expect(cache.thinking).toBe("signed");
      expect(estimateMessageTokens(thinking, undefined, cache)).toBe(4 + 2);
    });
  });

  describe("given options", () => {
    it.each([
      { thinking: "all" as const, expected: 4 + 2 + 6 },
      { thinking: "none" as const, expected: 4 + 2 },
      { thinking: "signed" as const, expected: 4 + 2 },
    ])("should count thinking by the $thinking policy", ({ thinking: policy, expected }) => {
      expect(estimateMessageTokens(thinking, undefined, createEstimateCache({ thinking: policy }))).toBe(expected);
    });

    it("should count every text with an injected estimator that wraps the default", () => {
      const calls: string[] = [];
      const cache = createEstimateCache({
        estimator: (text, family) => {
          calls.push(text);
          return 2 * defaultTokenEstimator(text, family);
        },
      });
      expect(estimateMessageTokens(thinking, undefined, cache)).toBe(4 + 4);
      expect(calls).toEqual(["ok"]);
    });
  });
});
