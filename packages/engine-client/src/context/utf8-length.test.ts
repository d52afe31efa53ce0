import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8Length } from "./estimate.js";

describe("utf8Length", () => {
  describe("given a text", () => {
    it.each([
      { text: "", expected: 0 },
      { text: "abc", expected: 3 },
      { text: "é", expected: 2 },
      { text: "中", expected: 3 },
      { text: "😀", expected: 4 },
    ])("should give $expected bytes for $text", ({ text, expected }) => {
      expect(utf8Length(text)).toBe(expected);
    });

    it("should agree with TextEncoder on well-formed text", () => {
      fc.assert(
        fc.property(fc.string({ unit: "grapheme" }), (text) => {
          expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
        }),
      );
    });
  });
});
