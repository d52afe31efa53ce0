import { describe, expect, it } from "vitest";
import { textMessage } from "../messages.js";
import { createEstimateCache, estimateMessagesTokens, estimateMessageTokens } from "./message-estimate.js";

describe("estimateMessagesTokens", () => {
  describe("given messages", () => {
    it.each([
      { name: "none", messages: [], expected: 0 },
      { name: "one", messages: [textMessage(0, "user", "hello")], expected: 4 + 2 },
      {
        name: "several",
        messages: [
          textMessage(0, "user", "hello"),
          textMessage(1, "assistant", "hello world"),
          textMessage(2, "tool", "{}"),
        ],
        expected: 6 + 7 + 5,
      },
    ])("should sum the estimates of $name", ({ messages, expected }) => {
      expect(estimateMessagesTokens(messages)).toBe(expected);
    });

    it("should agree with estimateMessageTokens one by one for a family and a cache", () => {
      const messages = [textMessage(0, "user", "12345 apples"), textMessage(1, "assistant", "中文 text")];
      const cache = createEstimateCache();
      const oneByOne = messages.reduce((sum, message) => sum + estimateMessageTokens(message, "qwen3"), 0);
      expect(estimateMessagesTokens(messages, "qwen3", cache)).toBe(oneByOne);
    });
  });
});
