import { describe, expect, it } from "vitest";
import { simulateConversation } from "./simulate.js";

// The acceptance runs of the API engine: a 200-turn chat built from the real transcripts, replayed against
// the fake provider server, which counts every request with o200k and refuses those over the window.
describe("simulateConversation (pnpm simulate)", () => {
  it.each([8_000, 1_000_000])(
    "given a 200-turn real chat at a %i-token window, should run to the end with no problem, under 1% refused, each healed",
    async (window) => {
      const result = await simulateConversation({ conversation: "sharegpt-zh.jsonl", turns: 200, window });
      expect(result.turns).toBe(200);
      expect(result.problems).toBe(0);
      expect(result.requestsOverWindow / result.requests).toBeLessThan(0.01);
      expect(result.heals).toBeGreaterThanOrEqual(result.requestsOverWindow);
      expect(result.maxRequestTokens).toBeLessThanOrEqual(window);
      // It folds again and again (9 times on the fixture's chats).
      if (window === 8_000) expect(result.folds).toBeGreaterThan(4);
    },
    120_000,
  );

  it("given --refuse-once, should heal the forced refusal quietly", async () => {
    const result = await simulateConversation({
      conversation: "aider-ru.jsonl",
      window: 32_000,
      refuseOnce: true,
      provider: "anthropic",
    });
    expect(result.heals).toBeGreaterThanOrEqual(1);
    expect(result.problems).toBe(0);
  });
});
