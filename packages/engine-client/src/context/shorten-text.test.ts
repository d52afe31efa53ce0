import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leftOutMarker, shortenText } from "./shorten.js";

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe("shortenText", () => {
  describe("given a text and a limit", () => {
    it.each([
      { name: "a text within the limit", text: "short", maxChars: 10, expected: "short", leftOut: 0 },
      { name: "an empty text", text: "", maxChars: 0, expected: "", leftOut: 0 },
      {
        name: "a text the marker would not make shorter",
        text: "a".repeat(60),
        maxChars: 50,
        expected: "a".repeat(60),
        leftOut: 0,
      },
      {
        name: "a long line (head and tail, half each)",
        text: "a".repeat(1_000),
        maxChars: 100,
        expected: `${"a".repeat(50)}${leftOutMarker(900)}${"a".repeat(50)}`,
        leftOut: 900,
      },
      {
        name: "lines (cut at a line break near the half)",
        text: Array.from({ length: 100 }, (_, line) => `line ${String(line).padStart(3, "0")}`).join("\n"),
        maxChars: 200,
        expected: `${Array.from({ length: 11 }, (_, line) => `line ${String(line).padStart(3, "0")}\n`).join("")}${leftOutMarker(702)}${Array.from({ length: 11 }, (_, line) => `line ${String(line + 89).padStart(3, "0")}`).join("\n")}`,
        leftOut: 702,
      },
      {
        name: "emoji (never inside a surrogate pair; characters are code points)",
        text: "😀".repeat(100),
        maxChars: 51,
        expected: `${"😀".repeat(13)}${leftOutMarker(75)}${"😀".repeat(12)}`,
        leftOut: 75,
      },
      {
        name: "Chinese",
        text: "中文".repeat(500),
        maxChars: 100,
        expected: `${"中文".repeat(25)}${leftOutMarker(900)}${"中文".repeat(25)}`,
        leftOut: 900,
      },
    ])("should shorten $name", ({ text, maxChars, expected, leftOut }) => {
      expect(shortenText(text, maxChars)).toEqual({ text: expected, leftOutCharacters: leftOut });
    });
  });

  describe("given any text and limit", () => {
    it("should keep a head and a tail of the text, state what was left out, and never split a surrogate pair", () => {
      fc.assert(
        fc.property(
          fc.string({ unit: fc.constantFrom("a", "b", " ", "\n", "中", "😀", "👍🏽", "é"), maxLength: 400 }),
          fc.integer({ min: 0, max: 300 }),
          (text, maxChars) => {
            const result = shortenText(text, maxChars);
            expect(loneSurrogate.test(result.text)).toBe(false);
            if (result.leftOutCharacters === 0) {
              expect(result.text).toBe(text);
              return;
            }
            const marker = leftOutMarker(result.leftOutCharacters);
            const at = result.text.indexOf(marker);
            const head = result.text.slice(0, at);
            const tail = result.text.slice(at + marker.length);
            expect(text.startsWith(head)).toBe(true);
            expect(text.endsWith(tail)).toBe(true);
            expect(head.length + tail.length).toBeLessThanOrEqual(maxChars);
            expect(result.text.length).toBeLessThan(text.length);
            const codePoints = (value: string) => [...value].length;
            expect(codePoints(head) + result.leftOutCharacters + codePoints(tail)).toBe(codePoints(text));
          },
        ),
      );
    });
  });
});
