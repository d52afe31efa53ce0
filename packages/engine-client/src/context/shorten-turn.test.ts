import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { estimateMessagesTokens } from "./message-estimate.js";
import { shortenTurn } from "./shorten.js";

const user = (seq: number, text: string): ChatMessage => ({ seq, role: "user", parts: [{ type: "text", text }] });
const assistant = (seq: number, text: string): ChatMessage => ({
  seq,
  role: "assistant",
  parts: [{ type: "text", text }],
});
const tool = (seq: number, text: string): ChatMessage => ({
  seq,
  role: "tool",
  parts: [{ type: "tool-result", callId: `c${seq}`, text }],
});
const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index % 97}`).join(" ");

describe("shortenTurn", () => {
  describe("given a turn and a target", () => {
    it.each([
      {
        name: "a turn that fits (unchanged)",
        turn: [user(0, "hello"), assistant(1, "hi")],
        target: 100,
        maxChars: null,
        changedSeqs: [],
        fits: true,
      },
      {
        name: "one huge tool result among short texts (only the longest shortened)",
        turn: [user(0, "read the log"), assistant(1, "reading"), tool(2, words(20_000)), tool(3, words(50))],
        target: 2_000,
        maxChars: "some",
        changedSeqs: [2],
        fits: true,
      },
      {
        name: "a long pasted message and a long tool result (both shortened)",
        turn: [user(0, words(5_000)), assistant(1, "ok"), tool(2, words(8_000))],
        target: 1_500,
        maxChars: "some",
        changedSeqs: [0, 2],
        fits: true,
      },
      {
        name: "many tool results (below the floor, down to the markers, when needed)",
        turn: [user(0, "go"), ...Array.from({ length: 60 }, (_, index) => tool(index + 1, words(300)))],
        target: 2_000,
        maxChars: "some",
        changedSeqs: Array.from({ length: 60 }, (_, index) => index + 1),
        fits: true,
      },
      {
        name: "the model's own long answer (never shortened: does not fit)",
        turn: [user(0, "write"), assistant(1, words(5_000))],
        target: 1_000,
        maxChars: null,
        changedSeqs: [],
        fits: false,
      },
      {
        name: "a person's message under the floor that alone is over the target (Chinese in a 512-token window)",
        turn: [user(0, "请帮我看一下周二的港口时刻表，去岛上的渡轮几点出发。".repeat(8))],
        target: 100,
        maxChars: "some",
        changedSeqs: [0],
        fits: true,
      },
      {
        name: "a turn made only of a picture (nothing to shorten)",
        turn: [
          { seq: 0, role: "user", parts: [{ type: "picture", name: "a.png", mediaType: "image/png", data: "AA" }] },
        ],
        target: 1_000,
        maxChars: null,
        changedSeqs: [],
        fits: false,
      },
    ] satisfies {
      name: string;
      turn: ChatMessage[];
      target: number;
      maxChars: null | "some";
      changedSeqs: number[];
      fits: boolean;
    }[])("should handle $name", ({ turn, target, maxChars, changedSeqs, fits }) => {
      const result = shortenTurn({ messages: turn, targetTokens: target });
      expect(result.maxChars === null ? null : "some").toBe(maxChars);
      expect(result.messages.filter((message, index) => message !== turn[index]).map((message) => message.seq)).toEqual(
        changedSeqs,
      );
      expect(result.fits).toBe(fits);
      expect(result.tokens).toBe(estimateMessagesTokens(result.messages));
      if (fits) expect(result.tokens).toBeLessThanOrEqual(target);
      for (const [index, message] of result.messages.entries()) {
        if (message.role === "assistant") expect(message).toBe(turn[index]);
      }
    });
  });

  describe("given a turn that needs shortening", () => {
    it("should leave texts at or under the limit alone and keep the longest as long as it can", () => {
      const turn = [user(0, "short question"), tool(1, words(10_000)), tool(2, words(200))];
      const result = shortenTurn({ messages: turn, targetTokens: 3_000 });
      expect(result.messages[0]).toBe(turn[0]);
      expect(result.messages[2]).toBe(turn[2]);
      expect(result.shortened.map((text) => text.seq)).toEqual([1]);
      const limit = result.maxChars ?? 0;
      const oneLonger = shortenTurn({ messages: turn, targetTokens: result.tokens - 1 });
      expect(oneLonger.maxChars ?? 0).toBeLessThanOrEqual(limit);
      expect(result.shortened[0]?.keptChars).toBeLessThanOrEqual(limit);
    });
  });
});
