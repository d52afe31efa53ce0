import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { splitIntoPieces, toPlainLines } from "./plain-lines.js";

describe("toPlainLines", () => {
  it("should name who said what, name pictures and tool calls, and leave thinking out", () => {
    const messages: ChatMessage[] = [
      {
        seq: 0,
        role: "user",
        parts: [
          { type: "text", text: "Look at this" },
          { type: "picture", name: "chart.png", mediaType: "image/png", data: "AAAA" },
        ],
      },
      {
        seq: 1,
        role: "assistant",
        parts: [
          { type: "thinking", text: "secret reasoning", signature: "sig" },
          { type: "text", text: "Let me read it." },
          { type: "tool-call", id: "c1", name: "read_file", arguments: JSON.stringify({ path: "a".repeat(500) }) },
        ],
      },
      {
        seq: 2,
        role: "tool",
        parts: [{ type: "tool-result", callId: "c1", name: "read_file", text: "line 1\nline 2" }],
      },
    ];
    const text = toPlainLines(messages);
    expect(text.split("\n")[0]).toBe("Person: Look at this");
    expect(text).toContain("Person: [picture: chart.png]");
    expect(text).toContain("Assistant: Let me read it.");
    expect(text).toMatch(/Assistant called read_file\(\{"path":"a{100,}…\)/);
    expect(text).toContain("Tool result (read_file): line 1\nline 2");
    expect(text).not.toContain("secret reasoning");
    expect(text.length).toBeLessThan(600);
  });

  it("given an empty chat, should give an empty text", () => {
    expect(toPlainLines([])).toBe("");
  });
});

describe("splitIntoPieces", () => {
  it.each([
    ["short text", "a\nb\nc", 10, ["a\nb\nc"]],
    ["cut at lines", "aaaa\nbbbb\ncccc", 9, ["aaaa\nbbbb", "cccc"]],
    ["a line longer than a piece", "abcdefghij", 4, ["abcd", "efgh", "ij"]],
    ["empty", "", 5, []],
  ] as const)("given %s, should cut as expected", (_name, text, max, expected) => {
    expect(splitIntoPieces(text, max)).toEqual(expected);
  });

  it("should never split a surrogate pair", () => {
    const pieces = splitIntoPieces("😀😀😀", 3);
    for (const piece of pieces) expect(piece).not.toMatch(/[\uD800-\uDBFF]$/);
    expect(pieces.join("")).toBe("😀😀😀");
  });

  it("should keep every character, in order, each piece within the limit (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.integer({ min: 2, max: 60 }), (text, max) => {
        const pieces = splitIntoPieces(text, max);
        for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(max);
        // Joining with the line breaks that were cut on gives the text back.
        expect(pieces.join("").replaceAll("\n", "")).toBe(text.replaceAll("\n", ""));
      }),
    );
  });
});
