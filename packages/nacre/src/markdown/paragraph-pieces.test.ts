import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createPieceSplitter, isSettledPiece, plainParagraphText, splitParagraph } from "./paragraph-pieces.js";

/** Feeds `text` to one splitter in prefixes ending at `ends` (sorted), then whole; returns every result. */
function feed(text: string, ends: readonly number[]) {
  const splitter = createPieceSplitter();
  return [...ends, text.length].map((end) => ({
    shown: text.slice(0, end),
    split: splitParagraph(splitter, text.slice(0, end)),
  }));
}

/** Markdown-ish tokens: words, sentence ends, and every inline and block syntax character. */
const token = fc.constantFrom(
  "The",
  "export",
  "reads",
  "é",
  " ",
  "  ",
  ". ",
  "! ",
  "? ",
  "**",
  "*",
  "_",
  "x_y",
  "`",
  "~",
  "[",
  "]",
  "(https://a.example/x)",
  "<b>",
  "<",
  "\n",
  "- ",
  "# ",
  "1. ",
  "|",
  "---",
  "\\",
  "www.a.example",
);
const markdownish = fc.array(token, { maxLength: 60 }).map((tokens) => tokens.join(""));
const cuts = (text: string) =>
  fc.uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 12 }).map((ends) => ends.sort((a, b) => a - b));

describe("splitParagraph", () => {
  it("should give pieces and a tail that join to the exact source, for any text and any growth", () => {
    fc.assert(
      fc.property(
        markdownish.chain((text) => fc.tuple(fc.constant(text), cuts(text))),
        ([text, ends]) => {
          for (const { shown, split } of feed(text, ends)) {
            if (split) expect(split.pieces.join("") + split.tail).toBe(shown);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("should keep a finished piece the same string as the paragraph grows", () => {
    fc.assert(
      fc.property(
        markdownish.chain((text) => fc.tuple(fc.constant(text), cuts(text))),
        ([text, ends]) => {
          let before: readonly string[] = [];
          for (const { split } of feed(text, ends)) {
            if (!split) return;
            expect(split.pieces.slice(0, before.length)).toEqual(before);
            before = split.pieces;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("should cut a long paragraph of plain sentences after each sentence, the tail one sentence at most", () => {
    const sentence =
      "The export reads each month and writes one row per customer, with the VAT number and the totals. ";
    const text = sentence.repeat(40);
    const results = feed(
      text,
      Array.from({ length: text.length / 20 }, (_, index) => index * 20),
    );
    const last = results.at(-1)?.split;
    expect(last?.pieces).toHaveLength(39);
    expect(last?.tail).toBe(sentence);
    for (const { split } of results) expect(split?.tail.length).toBeLessThanOrEqual(sentence.length + 20);
  });

  it("should not cut inside emphasis, a code span or a link that spans sentences", () => {
    const text =
      "Plain one. **Bold. Still bold** ends. A `code. span` here. See [the. docs](https://a.example). Last one.";
    const split = feed(text, [5, 30, 60, 90]).at(-1)?.split;
    expect(split?.pieces).toEqual([
      "Plain one. ",
      "**Bold. Still bold** ends. ",
      "A `code. span` here. ",
      "See [the. docs](https://a.example). ",
    ]);
    expect(split?.tail).toBe("Last one.");
  });

  it("should not cut after an opener that is never closed (a later sentence could close it)", () => {
    const split = feed("First. Then *open. More. And more. Still.", [10, 20, 30]).at(-1)?.split;
    expect(split?.pieces).toEqual(["First. "]);
  });

  it("should cut a run-on sentence at a space once it is long", () => {
    const text = `${"word ".repeat(120)}end`;
    const split = feed(text, [100, 300, 500]).at(-1)?.split;
    expect(split?.pieces.length).toBeGreaterThan(0);
    for (const piece of split?.pieces ?? []) expect(piece.length).toBeLessThan(300);
  });

  it.each([
    ["a list item", "Some text.\n- item. More"],
    ["a heading", "Some text. More.\n# Title. Next"],
    ["a setext underline", "Some text. More.\n---"],
    ["a table delimiter row", "a | b. More | c\n| --- | --- |"],
    ["an indented first line", "    code. More text"],
    ["an ordered list", "1. First. Second"],
    ["a quote", "> Said. More"],
    ["a blank line inside", "One. Two.\n\nThree. Four"],
  ])("should say it is not one paragraph when the text has %s", (_, text) => {
    expect(feed(text, [3, 8]).at(-1)?.split).toBeNull();
  });

  it("should take blank lines before the text and plain continuation lines as one paragraph", () => {
    const split = feed("\n\nFirst line. Still.\nSecond line. More.", [4]).at(-1)?.split;
    expect(split?.pieces.join("")).toBe("\n\nFirst line. Still.\nSecond line. ");
  });
});

describe("isSettledPiece", () => {
  it.each([
    ["plain prose", "Plain words.", true],
    ["closed emphasis and code", "A **b** and `c` and ~~d~~ and _e_.", true],
    ["a link and an image", "[a](https://a.example) ![b](https://b.example/i.png).", true],
    ["snake_case inside a word", "the snake_case name.", true],
    ["an open strong", "A **b c.", false],
    ["an open code span", "A `b c.", false],
    ["an open bracket", "A [b c.", false],
    ["raw HTML", "A <b>c</b>.", false],
    ["an unused tilde", "About ~5 minutes.", false],
    ["a star with spaces on both sides", "So 2 * 3 is 6 and a ~ b.", true],
    ["a citation that is not a link", "As shown [1] and [^2].", true],
    ["an opener at a text's edge", "A `c`* d.", false],
    ["a bracket left open inside brackets", "A [[b] c.", false],
    ["an underscore at a word's edge", "A b_ c.", false],
    ["an autolink and a comparison", "See <https://a.example> if a < b.", true],
    ["a comment", "A <!-- b.", false],
  ])("should tell %s", (_, piece, settled) => {
    expect(isSettledPiece(piece)).toBe(settled);
  });
});

describe("plainParagraphText", () => {
  it.each([
    [
      "plain words, their final spaces trimmed",
      "The export reads, 3 times (twice). \t",
      "The export reads, 3 times (twice).",
    ],
    ["emphasis", "A **b**.", null],
    ["an entity", "A &amp; b.", null],
    ["an escape", "A \\. b", null],
    ["a line break", "A\nb", null],
    ["a www autolink", "See WWW.a.example now", null],
    ["a URL", "See https://a.example now", null],
    ["an address", "Write to a@b.example now", null],
    ["a leading space", " A b", null],
  ])("should tell %s", (_, source, plain) => {
    expect(plainParagraphText(source)).toBe(plain);
  });
});
