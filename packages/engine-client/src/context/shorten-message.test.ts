import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { createEstimateCache } from "./message-estimate.js";
import { leftOutMarker, shortenMessage } from "./shorten.js";

const long = "x".repeat(1_000);

describe("shortenMessage", () => {
  describe("given a message and a limit", () => {
    it.each([
      {
        name: "the model's own message (never changed)",
        message: { seq: 3, role: "assistant", parts: [{ type: "text", text: long }] },
        parts: [{ type: "text", text: long }],
        shortened: [],
      },
      {
        name: "a person's long text",
        message: { seq: 3, role: "user", parts: [{ type: "text", text: long }] },
        parts: [{ type: "text", text: `${"x".repeat(50)}${leftOutMarker(900)}${"x".repeat(50)}` }],
        shortened: [{ seq: 3, partIndex: 0, originalChars: 1_000, keptChars: 100, leftOutCharacters: 900 }],
      },
      {
        name: "a tool result (its call id kept) next to a picture (kept)",
        message: {
          seq: 4,
          role: "tool",
          parts: [
            { type: "picture", name: "a.png", mediaType: "image/png", data: "AAAA" },
            { type: "tool-result", callId: "c1", name: "read", text: long },
          ],
        },
        parts: [
          { type: "picture", name: "a.png", mediaType: "image/png", data: "AAAA" },
          {
            type: "tool-result",
            callId: "c1",
            name: "read",
            text: `${"x".repeat(50)}${leftOutMarker(900)}${"x".repeat(50)}`,
          },
        ],
        shortened: [{ seq: 4, partIndex: 1, originalChars: 1_000, keptChars: 100, leftOutCharacters: 900 }],
      },
      {
        name: "a short text",
        message: { seq: 5, role: "user", parts: [{ type: "text", text: "hello" }] },
        parts: [{ type: "text", text: "hello" }],
        shortened: [],
      },
    ] satisfies { name: string; message: ChatMessage; parts: ChatMessage["parts"]; shortened: unknown[] }[])(
      "should hold $name to the limit",
      ({ message, parts, shortened }) => {
        const frozen = Object.freeze({
          ...message,
          parts: Object.freeze(message.parts.map((part) => Object.freeze(part))),
        });
        const copy = shortenMessage(frozen, 100);
        expect(copy.message.parts).toEqual(parts);
        expect(copy.shortened).toEqual(shortened);
        expect(copy.message === frozen).toBe(shortened.length === 0);
        expect(copy.message.seq).toBe(message.seq);
      },
    );
  });

  describe("given a cache", () => {
    it("should make the copy once per limit", () => {
      const cache = createEstimateCache();
      const message: ChatMessage = { seq: 0, role: "user", parts: [{ type: "text", text: long }] };
      const first = shortenMessage(message, 100, cache);
      expect(shortenMessage(message, 100, cache)).toBe(first);
      expect(shortenMessage(message, 200, cache)).not.toBe(first);
    });
  });
});
