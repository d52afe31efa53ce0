import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { estimateTokens } from "./estimate.js";
import {
  createEstimateCache,
  estimateMessageTokens,
  messageOverheadTokens,
  pictureTokens,
} from "./message-estimate.js";

const message = (parts: ChatMessage["parts"], role: ChatMessage["role"] = "user"): ChatMessage => ({
  seq: 0,
  role,
  parts,
});

describe("estimateMessageTokens", () => {
  describe("given a message", () => {
    it.each([
      { name: "no parts", value: message([]), expected: messageOverheadTokens },
      { name: "a text", value: message([{ type: "text", text: "hello world" }]), expected: 4 + 3 },
      {
        name: "a tool call (id, name and arguments)",
        value: message([{ type: "tool-call", id: "c1", name: "read", arguments: '{"path":"a.ts"}' }], "assistant"),
        expected: 4 + estimateTokens("c1") + estimateTokens("read") + estimateTokens('{"path":"a.ts"}'),
      },
      {
        name: "a tool result (call id, name and text)",
        value: message([{ type: "tool-result", callId: "c1", name: "read", text: "const a = 1;" }], "tool"),
        expected: 4 + estimateTokens("c1") + estimateTokens("read") + estimateTokens("const a = 1;"),
      },
      {
        name: "a picture with its bytes",
        value: message([{ type: "picture", name: "a.png", mediaType: "image/png", data: "iVBORw0KGgo=" }]),
        expected: 4 + pictureTokens,
      },
      {
        name: "a picture by link",
        value: message([{ type: "picture", name: "a.png", mediaType: "image/png", url: "https://x.test/a.png" }]),
        expected: 4 + pictureTokens,
      },
      {
        name: "a picture that is only named (not sent)",
        value: message([{ type: "picture", name: "a.png", mediaType: "image/png" }]),
        expected: 4,
      },
      {
        name: "signed thinking (sent back)",
        value: message([{ type: "thinking", text: "hmm yes", signature: "sig" }], "assistant"),
        expected: 4 + 3,
      },
      {
        name: "redacted thinking (sent back)",
        value: message([{ type: "thinking", text: "QUJD", redacted: true }], "assistant"),
        expected: 4 + estimateTokens("QUJD"),
      },
      {
        name: "unsigned thinking (not sent back)",
        value: message([{ type: "thinking", text: "hmm yes" }], "assistant"),
        expected: 4,
      },
    ])("should count $name", ({ value, expected }) => {
      expect(estimateMessageTokens(value)).toBe(expected);
    });

    it.each([
      { family: "o200k", text: "12345", expected: 4 + 4 },
      { family: "qwen3", text: "12345", expected: 4 + 6 },
    ])("should count with the $family table when given", ({ family, text, expected }) => {
      expect(estimateMessageTokens(message([{ type: "text", text }]), family)).toBe(expected);
    });
  });

  describe("given a cache", () => {
    it("should count each message object once and recount when the family changes", () => {
      const counted: string[] = [];
      const cache = createEstimateCache({
        estimator: (text, family) => {
          counted.push(`${family ?? "all"}:${text}`);
          return estimateTokens(text, family);
        },
      });
      const first = message([{ type: "text", text: "12345" }]);
      expect(estimateMessageTokens(first, undefined, cache)).toBe(9);
      expect(estimateMessageTokens(first, undefined, cache)).toBe(9);
      expect(estimateMessageTokens(first, "o200k", cache)).toBe(8);
      expect(estimateMessageTokens({ ...first }, "o200k", cache)).toBe(8);
      expect(counted).toEqual(["all:12345", "o200k:12345", "o200k:12345"]);
    });
  });
});
