import { describe, expect, it } from "vitest";
import type { ChatMessage, MessagePart } from "../messages.js";
import { isShortenablePart } from "./shorten.js";

const text: MessagePart = { type: "text", text: "x" };
const result: MessagePart = { type: "tool-result", callId: "c1", text: "x" };
const picture: MessagePart = { type: "picture", name: "a.png", mediaType: "image/png", data: "x" };
const call: MessagePart = { type: "tool-call", id: "c1", name: "read", arguments: "{}" };
const thinking: MessagePart = { type: "thinking", text: "x", signature: "s" };

describe("isShortenablePart", () => {
  describe("given a part of a message", () => {
    it.each([
      { role: "user", part: text, expected: true, why: "what the person sent" },
      { role: "user", part: result, expected: true, why: "a tool result handed back with the person's message" },
      { role: "tool", part: result, expected: true, why: "what a tool returned" },
      { role: "tool", part: text, expected: true, why: "a tool's text" },
      { role: "user", part: picture, expected: false, why: "pictures are not text" },
      { role: "assistant", part: text, expected: false, why: "the model's own words" },
      { role: "assistant", part: call, expected: false, why: "the model's own tool call" },
      { role: "assistant", part: thinking, expected: false, why: "signed thinking travels back untouched" },
    ] satisfies { role: ChatMessage["role"]; part: MessagePart; expected: boolean; why: string }[])(
      "should say $expected for a $role $part.type ($why)",
      ({ role, part, expected }) => {
        expect(isShortenablePart({ seq: 0, role, parts: [part] }, part)).toBe(expected);
      },
    );
  });
});
