import { describe, expect, it } from "vitest";
import { leftOutMarker } from "./shorten.js";

describe("leftOutMarker", () => {
  describe("given how many characters were left out", () => {
    it.each([
      { characters: 1, expected: "\n[... 1 characters left out ...]\n" },
      { characters: 123456, expected: "\n[... 123456 characters left out ...]\n" },
    ])("should say $characters on a line of its own", ({ characters, expected }) => {
      expect(leftOutMarker(characters)).toBe(expected);
    });
  });
});
