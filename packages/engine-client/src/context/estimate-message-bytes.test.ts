import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { createEstimateCache, estimateMessageBytes } from "./message-estimate.js";

describe("estimateMessageBytes", () => {
  describe("given a message", () => {
    const overhead = (parts: number) => 48 + 24 * parts;
    it.each([
      { name: "no parts", parts: [], expected: overhead(0) },
      { name: "ASCII text", parts: [{ type: "text", text: "hello" }], expected: overhead(1) + 5 },
      { name: "non-ASCII text (UTF-8)", parts: [{ type: "text", text: "é中😀" }], expected: overhead(1) + 2 + 3 + 4 },
      {
        name: "a tool call",
        parts: [{ type: "tool-call", id: "c1", name: "read", arguments: "{}" }],
        expected: overhead(1) + 2 + 4 + 2,
      },
      {
        name: "a picture's data, link and name",
        parts: [{ type: "picture", name: "a.png", mediaType: "image/png", data: "x".repeat(1000) }],
        expected: overhead(1) + 1000 + 5,
      },
      {
        name: "unsigned thinking (kept in the file though not sent)",
        parts: [{ type: "thinking", text: "hmm" }],
        expected: overhead(1) + 3,
      },
    ] satisfies { name: string; parts: ChatMessage["parts"]; expected: number }[])(
      "should approximate the serialized size of $name",
      ({ parts, expected }) => {
        expect(estimateMessageBytes({ seq: 0, role: "user", parts })).toBe(expected);
      },
    );

    it("should give the same size from a cache, whatever family was counted", () => {
      const cache = createEstimateCache();
      const value: ChatMessage = { seq: 0, role: "user", parts: [{ type: "text", text: "héllo" }] };
      expect(estimateMessageBytes(value, cache)).toBe(estimateMessageBytes(value));
    });
  });
});
