import { readFileSync } from "node:fs";
import { testFixturesPath } from "@conch/fake-provider";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateTokens } from "./estimate.js";

describe("estimateTokens", () => {
  describe("given a text and no family (the all-model table)", () => {
    it.each([
      { text: "", expected: 0, why: "nothing to count" },
      { text: " ", expected: 0, why: "a single space is free" },
      { text: "hello", expected: 2, why: "one subword: 1.2" },
      { text: "hello world", expected: 3, why: "two subwords: 2.4" },
      { text: "HTTPServer", expected: 3, why: "split at UPPER→Upper-lower: 2 subwords" },
      { text: "camelCase", expected: 3, why: "split at lower→Upper: 2 subwords" },
      { text: "12345", expected: 5, why: "digit groups 2 × 1.6 + digits 5 × 0.35" },
      { text: "{}", expected: 1, why: "one punctuation run 0.7 + 2 × 0.15" },
      { text: "a  b", expected: 4, why: "2 subwords + one run of two spaces 0.8" },
      { text: "\n\n\n", expected: 2, why: "one line-break run: 1.45" },
      { text: "中文", expected: 3, why: "han 2 × 1.05" },
      { text: "한국어", expected: 5, why: "hangul 3 × 1.4" },
      { text: "привет", expected: 4, why: "cyrillic 6 × 0.55" },
      { text: "مرحبا", expected: 6, why: "arabic 5 × 1.1" },
      { text: "नमस्ते", expected: 8, why: "indic 6 × 1.25" },
      { text: "é", expected: 1, why: "latin extended 1" },
      { text: "😀", expected: 3, why: "one emoji code point (a surrogate pair): 2.4" },
      { text: "👍🏽", expected: 5, why: "emoji and skin tone: 2 × 2.4" },
      { text: "👨‍👩‍👧", expected: 12, why: "3 emoji and 2 joiners: 5 × 2.4" },
      { text: "\ud800", expected: 1, why: "a lone surrogate is one other code point" },
      { text: "Ω", expected: 1, why: "other scripts: 1" },
      { text: "supercalifragilisticexpialidocious", expected: 11, why: "past 12 letters, a piece every 3: 9 subwords" },
      { text: "x".repeat(1_200), expected: 477, why: "a long run is many tokens: 397 subwords" },
      { text: "A".repeat(20), expected: 5, why: "upper-case runs too: 4 subwords" },
    ])("should count $text as $expected ($why)", ({ text, expected }) => {
      expect(estimateTokens(text)).toBe(expected);
    });
  });

  describe("given a family with its own table", () => {
    it.each([
      { text: "hello", family: "o200k", expected: 2 },
      { text: "12345", family: "o200k", expected: 4 },
      { text: "12345", family: "qwen3", expected: 6 },
      { text: "привет", family: "gemma3", expected: 3 },
      { text: "12345", family: "unknown-family", expected: 5 },
    ])("should count $text for $family as $expected", ({ text, family, expected }) => {
      expect(estimateTokens(text, family)).toBe(expected);
    });
  });

  describe("given any text", () => {
    it("should give a whole number that never shrinks when text is appended after a line break", () => {
      fc.assert(
        fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (head, tail) => {
          const count = estimateTokens(head);
          expect(Number.isInteger(count)).toBe(true);
          expect(count).toBeGreaterThanOrEqual(0);
          expect(estimateTokens(`${head}\n${tail}`)).toBeGreaterThanOrEqual(count);
        }),
      );
    });

    it.each(Array.from({ length: 40 }, (_, index) => index + 1))(
      "should count %i emoji (surrogate pairs) as that many code points, never twice as many",
      (length) => {
        expect(estimateTokens("😀".repeat(length))).toBe(Math.ceil(length * 2.4));
      },
    );
  });

  describe("given real text with real token counts (test-fixtures/token-corpus/train.jsonl: 27 kinds of text)", () => {
    const corpus = readFileSync(testFixturesPath("token-corpus", "train.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { text: string; tokens: Record<string, number> });

    it.each(["o200k", "cl100k", "qwen3", "llama3", "gemma3", "deepseek_v3"])(
      "should be more than 10% short on at most 2% of samples, median at most 1.35×, on %s",
      (tokenizer) => {
        const ratios = corpus.map((sample) => estimateTokens(sample.text) / (sample.tokens[tokenizer] as number));
        const short = ratios.filter((ratio) => ratio < 0.9).length / ratios.length;
        const sorted = [...ratios].sort((a, b) => a - b);
        expect(short).toBeLessThanOrEqual(0.02);
        expect(sorted[sorted.length >> 1]).toBeLessThanOrEqual(1.35);
      },
    );
  });
});
