import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeFrameText } from "./frame.js";

// The escaping as it was before it was made linear (one array entry per character, every character's letter
// computed), kept here as the reference: the linear one must escape every text exactly as it did.
const mayNeedEscaping = /[<&\uff1c\ufe64\u2039\u3008\u2329\u27e8\u276e\u02c2\u1438\u276c]/;
const confusables: Readonly<Record<string, string>> = {
  а: "a",
  в: "b",
  е: "e",
  ё: "e",
  к: "k",
  м: "m",
  н: "h",
  о: "o",
  р: "p",
  с: "c",
  т: "t",
  у: "y",
  х: "x",
  і: "i",
  ї: "i",
  ј: "j",
  ѕ: "s",
  ԁ: "d",
  ԛ: "q",
  ԝ: "w",
  һ: "h",
  ӏ: "l",
  ɑ: "a",
  ɡ: "g",
  ı: "i",
  ℓ: "l",
  α: "a",
  ε: "e",
  ι: "i",
  κ: "k",
  ν: "v",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  χ: "x",
  γ: "y",
};
const openers = new Set([0x3c, 0xff1c, 0xfe64, 0x2039, 0x3008, 0x2329, 0x27e8, 0x276e, 0x02c2, 0x1438, 0x276c]);
function referenceLetterOf(char: string): string | null {
  const unit = char.charCodeAt(0);
  if (unit < 0x80) {
    const lower = char.toLowerCase();
    return /[a-z0-9]/.test(lower) ? lower : null;
  }
  const folded = char.normalize("NFKC").toLowerCase();
  const mapped = confusables[folded] ?? folded;
  return mapped.length === 1 && /[a-z0-9]/.test(mapped) ? mapped : null;
}
function referenceEscape(text: string, tagNames: readonly string[]): string {
  if (!mayNeedEscaping.test(text)) return text;
  const chars = Array.from(text);
  const length = chars.length;
  const letters = chars.map(referenceLetterOf);
  // nextLetter[i]: the first letter or digit at or after i (length when there is none).
  const nextLetter = new Int32Array(length + 1);
  nextLetter[length] = length;
  for (let index = length - 1; index >= 0; index--) {
    nextLetter[index] = letters[index] !== null ? index : (nextLetter[index + 1] as number);
  }
  const startsName = (from: number, name: string): boolean => {
    let at = nextLetter[from] as number;
    for (let letter = 0; letter < name.length; letter++) {
      if (at === length || letters[at] !== name[letter]) return false;
      at = nextLetter[at + 1] as number;
    }
    return true;
  };
  // nextAscii[i]: the same for ASCII letters and digits only: a "<" followed by none of them runs into the frame's close.
  const nextAscii = new Int32Array(length + 1);
  nextAscii[length] = length;
  for (let index = length - 1; index >= 0; index--) {
    nextAscii[index] = /^[A-Za-z0-9]$/.test(chars[index] as string) ? index : (nextAscii[index + 1] as number);
  }
  const startsTag = (from: number): boolean =>
    (nextLetter[from] as number) === length ||
    (nextAscii[from] as number) === length ||
    tagNames.some((name) => startsName(from, name));
  let escaped = "";
  let changed = false;
  for (let index = 0; index < length; index++) {
    const char = chars[index] as string;
    const code = char.codePointAt(0) as number;
    let replacement: string | null = null;
    if (code === 0x26 && /^(?:amp|lt|#\d{1,7}|#x[0-9a-f]{1,6});/i.test(chars.slice(index + 1, index + 10).join(""))) {
      replacement = "&amp;";
    } else if (openers.has(code) && startsTag(index + 1)) replacement = code === 0x3c ? "&lt;" : `&#${code};`;
    if (replacement === null) {
      escaped += char;
      continue;
    }
    escaped += replacement;
    changed = true;
  }
  return changed ? escaped : text;
}

/** Characters that matter to the escaping, and some that do not. */
const alphabet = fc.constantFrom(
  ..."<&;#x0123456789abcdefghijklmnopqrstuvwxyzEARLIERCHATSUMMARY /-_>\n".split(""),
  "\uff1c",
  "\ufe64",
  "\u2039",
  "\u3008",
  "\u2329",
  "\u27e8",
  "\u276e",
  "\u02c2",
  "\u1438",
  "\u276c",
  "е",
  "а",
  "і",
  "ｅ",
  "Ｅ",
  "ａ",
  "é",
  "🐚",
  "\ud83d",
  "ﬁ",
  "Ⅸ",
  "²",
);

describe("escapeFrameText", () => {
  it("should escape every text exactly as the reference does", () => {
    const names = [["earlier"], ["chat", "summary"]] as const;
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 60 }), fc.constantFrom(...names), (chars, tagNames) => {
        const text = chars.join("");
        expect(escapeFrameText(text, tagNames)).toBe(referenceEscape(text, tagNames));
      }),
      { numRuns: 3_000 },
    );
  });

  it("should escape long texts with many openers as the reference does", () => {
    const texts = [
      `${"<".repeat(5_000)}earlier`,
      `${"< - ".repeat(3_000)}x`,
      `${"&amp;&#60;&#x3c;&lt; <div> ".repeat(2_000)}`,
      `${"a <b> & c ".repeat(3_000)}<${" ".repeat(100)}`,
    ];
    for (const text of texts) {
      expect(escapeFrameText(text, ["chat", "summary"])).toBe(referenceEscape(text, ["chat", "summary"]));
      expect(escapeFrameText(text, ["earlier"])).toBe(referenceEscape(text, ["earlier"]));
    }
  });
});
