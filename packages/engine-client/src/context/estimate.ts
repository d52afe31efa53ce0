/**
 * The token estimate: a one-pass pre-token count with measured weights, no tokenizer.
 *
 * BPE tokenizers first split text into pre-tokens (letter runs, digit groups, punctuation runs, spaces)
 * and then merge inside each piece, so the number of pieces predicts the token count far better than
 * the length does: "four ASCII characters a token" is 20–60% short on JSON, logs, paths, numbers,
 * base64 and minified code, which is what tool results are made of. The weights below were fitted
 * against eight real tokenizers on real text (test-fixtures/token-corpus/findings.md, tables P2 and P3).
 */

/** Tokenizer families with a measured weight table (findings.md, table P3). */
export type TokenFamily =
  | "o200k"
  | "cl100k"
  | "claude-legacy"
  | "qwen3"
  | "gemma3"
  | "llama3"
  | "deepseek-v3"
  | "mistral-v1";

/** Every family with its own weight table. */
export const tokenFamilies: readonly TokenFamily[] = [
  "o200k",
  "cl100k",
  "claude-legacy",
  "qwen3",
  "gemma3",
  "llama3",
  "deepseek-v3",
  "mistral-v1",
];

/** The weight of each pre-token counter: the estimate is `ceil(Σ weight × count)`. */
export interface PreTokenWeights {
  /**
   * ASCII letter runs, split at lower→Upper and at UPPER→Upper-lower (`HTTP|Server`). A run longer than 12
   * letters counts one more piece every 3 letters past the 12th (ids and hashes are not one token).
   */
  readonly subwords: number;
  /** Σ ceil(length / 3) over digit runs. */
  readonly digitGroups: number;
  /** Every ASCII digit. */
  readonly digits: number;
  /** Runs of ASCII punctuation. */
  readonly punctuationRuns: number;
  /** Every ASCII punctuation character. */
  readonly punctuation: number;
  /** Runs of two or more spaces or tabs (a single space is free). */
  readonly spaceRuns: number;
  /** Runs of CR/LF. */
  readonly lineBreakRuns: number;
  /** CJK ideographs, kana, CJK punctuation and full-width forms, per code point. */
  readonly han: number;
  /** Hangul, per code point. */
  readonly hangul: number;
  /** Cyrillic (U+0400–052F), per code point. */
  readonly cyrillic: number;
  /** Arabic and its presentation forms, per code point. */
  readonly arabic: number;
  /** Indic scripts (U+0900–0DFF), per code point. */
  readonly indic: number;
  /** Latin beyond ASCII (U+0080–024F, 1E00–1EFF), per code point. */
  readonly latinExtended: number;
  /** Emoji and symbols, variation selectors, ZWJ, keycaps and tags, per code point. */
  readonly emoji: number;
  /** Every other non-ASCII code point. */
  readonly otherScripts: number;
}

function weights(
  subwords: number,
  digitGroups: number,
  digits: number,
  punctuationRuns: number,
  punctuation: number,
  spaceRuns: number,
  lineBreakRuns: number,
  han: number,
  hangul: number,
  cyrillic: number,
  arabic: number,
  indic: number,
  latinExtended: number,
  emoji: number,
  otherScripts: number,
): PreTokenWeights {
  return Object.freeze({
    subwords,
    digitGroups,
    digits,
    punctuationRuns,
    punctuation,
    spaceRuns,
    lineBreakRuns,
    han,
    hangul,
    cyrillic,
    arabic,
    indic,
    latinExtended,
    emoji,
    otherScripts,
  });
}

/**
 * The all-model table (P2): one table for all eight measured tokenizers. It is the default, used when
 * the model's family is unknown (Claude 3 and later, Gemini, newer Mistral and Llama models, ...):
 * at most 2% of samples more than 10% short on seven of eight tokenizers.
 */
export const allModelWeights: PreTokenWeights = weights(
  1.2,
  1.6,
  0.35,
  0.7,
  0.15,
  0.8,
  1.45,
  1.05,
  1.4,
  0.55,
  1.1,
  1.25,
  1,
  2.4,
  1,
);

/** The per-family tables (P3), for when the model's tokenizer is known: about 1% short, median 1.05–1.08×. */
export const familyWeights: Readonly<Record<TokenFamily, PreTokenWeights>> = Object.freeze({
  o200k: weights(1.2, 1.55, 0, 0.3, 0.25, 0.95, 0.75, 0.8, 0.8, 0.4, 0.4, 0.4, 1, 1.75, 1),
  cl100k: weights(1.25, 1.65, 0, 0.25, 0.25, 1.05, 0.55, 1.1, 1.3, 0.65, 0.9, 1.2, 1, 2.5, 1),
  "claude-legacy": weights(1.35, 1.25, 0, 0.65, 0.2, 0, 1.3, 1.05, 1.45, 0.7, 1.25, 1.4, 1, 2.45, 1),
  qwen3: weights(1.2, 1.15, 0.7, 0.25, 0.25, 1, 0.75, 0.8, 0.9, 0.5, 0.7, 1.15, 1, 1.75, 1),
  gemma3: weights(1.15, 0.95, 0.65, 0.85, 0.1, 0.5, 1.7, 0.65, 0.75, 0.35, 0.35, 0.3, 1, 1.35, 1),
  llama3: weights(1.25, 1.65, 0, 0.25, 0.25, 1, 0.55, 0.85, 0.8, 0.45, 0.45, 0.65, 1, 2.3, 1),
  "deepseek-v3": weights(1.3, 1.45, 0, 0.5, 0.2, 0.8, 0.95, 0.7, 0.9, 0.4, 0.45, 0.7, 1, 1.8, 1),
  "mistral-v1": weights(1.4, 1.15, 0.6, 0.9, 0.1, 0.75, 1.3, 1.15, 1.5, 0.55, 1.2, 1.3, 1, 2.85, 1),
});

/** The weight table for a family name; the all-model table (P2) when the name is missing or unknown. */
export function weightsFor(family?: string): PreTokenWeights {
  if (family === undefined) return allModelWeights;
  return Object.hasOwn(familyWeights, family) ? familyWeights[family as TokenFamily] : allModelWeights;
}

/**
 * The tokenizer family of a model id, or undefined when it has no measured table (then the all-model
 * table applies, as it should for Claude 3+, Gemini and other unpublished tokenizers). Provider prefixes
 * (`openai/`, `meta-llama/`) and Ollama tags (`:8b`) are ignored.
 */
export function modelFamily(modelId: string): TokenFamily | undefined {
  const id = modelId.toLowerCase().slice(modelId.lastIndexOf("/") + 1);
  // Gemma 3 stood in for Gemini in the measurement; Gemini itself is unmeasured, so it stays on P2.
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|chatgpt-4o|o[1345](?:$|[-:]))/.test(id)) return "o200k";
  if (/^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada)/.test(id)) return "cl100k";
  if (/^claude-(?:1|2|instant)/.test(id)) return "claude-legacy";
  if (/^(qwen2\.5|qwen3|qwq)/.test(id)) return "qwen3";
  if (/^gemma-?3/.test(id)) return "gemma3";
  if (/^(meta-)?llama-?3/.test(id)) return "llama3";
  if (/^deepseek-(?:v3|r1|chat|reasoner)/.test(id)) return "deepseek-v3";
  if (/^(mistral-7b|mixtral-8x7b|open-mistral-7b|open-mixtral-8x7b|mistral:7b|mistral$)/.test(id)) return "mistral-v1";
  return undefined;
}

// Character classes of UTF-16 code units, looked up in one table so the loop does one load per unit.
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const PUNCT = 4;
const SPACE = 5;
const BREAK = 6;
const HAN = 7;
const HANGUL = 8;
const CYRILLIC = 9;
const ARABIC = 10;
const INDIC = 11;
const LATINX = 12;
const EMOJI = 13;
const OTHER = 14;
const HIGH_SURROGATE = 15;
const LOW_SURROGATE = 16;

const unitClass = buildUnitClasses();

// A vocabulary has few words longer than this; past it, a run of lower-case letters (an id, a hash, a
// compound) costs a piece every few letters, as random letters do in real tokenizers (about 2 a token).
const longWord = 12;
const longRunLetters = 3;

function buildUnitClasses(): Uint8Array {
  const table = new Uint8Array(65536).fill(OTHER);
  const fill = (from: number, to: number, value: number) => table.fill(value, from, to + 1);
  fill(0x00, 0x7f, PUNCT); // controls count as punctuation; the ASCII letters, digits and spaces follow
  fill(0x61, 0x7a, LOWER);
  fill(0x41, 0x5a, UPPER);
  fill(0x30, 0x39, DIGIT);
  table[0x20] = SPACE;
  table[0x09] = SPACE;
  table[0x0a] = BREAK;
  table[0x0d] = BREAK;
  fill(0x80, 0x24f, LATINX);
  fill(0x1e00, 0x1eff, LATINX);
  fill(0x400, 0x52f, CYRILLIC);
  fill(0x600, 0x6ff, ARABIC);
  fill(0x750, 0x77f, ARABIC);
  fill(0xfb50, 0xfdff, ARABIC);
  fill(0xfe70, 0xfeff, ARABIC);
  fill(0x900, 0xdff, INDIC);
  fill(0x1100, 0x11ff, HANGUL);
  fill(0x3130, 0x318f, HANGUL);
  fill(0xa960, 0xa97f, HANGUL);
  fill(0xac00, 0xd7ff, HANGUL);
  fill(0x2e80, 0x2fff, HAN);
  fill(0x3000, 0x312f, HAN);
  fill(0x3190, 0x33ff, HAN);
  fill(0x3400, 0x4dbf, HAN);
  fill(0x4e00, 0x9fff, HAN);
  fill(0xf900, 0xfaff, HAN);
  fill(0xff00, 0xffef, HAN);
  fill(0x2190, 0x2bff, EMOJI);
  fill(0xfe00, 0xfe0f, EMOJI);
  table[0x200d] = EMOJI;
  table[0x20e3] = EMOJI;
  fill(0xd800, 0xdbff, HIGH_SURROGATE);
  fill(0xdc00, 0xdfff, LOW_SURROGATE);
  return table;
}

function astralClass(codePoint: number): number {
  if (codePoint >= 0x1f000 && codePoint <= 0x1faff) return EMOJI;
  if (codePoint >= 0xe0020 && codePoint <= 0xe007f) return EMOJI; // tag characters (flags of regions)
  if (codePoint >= 0x20000 && codePoint <= 0x3ffff) return HAN; // CJK extension planes
  return OTHER;
}

// Code points per script class, counted by the scan (reset on each call; the scan calls nothing back).
const scriptCounts = new Int32Array(LOW_SURROGATE + 1);

/** Receives the UTF-8 length of the scanned text, so callers that need both pay for one pass. */
export interface ScanSizes {
  utf8Bytes: number;
}

/**
 * The weighted pre-token count of `text`, not rounded. Adds the text's UTF-8 length to `sizes`.
 * Internal: the planner uses it to read tokens and bytes in one pass.
 */
export function scanPreTokens(text: string, table: PreTokenWeights, sizes: ScanSizes): number {
  let subwords = 0;
  let digitGroups = 0;
  let digits = 0;
  let punctuationRuns = 0;
  let punctuation = 0;
  let spaceRuns = 0;
  let lineBreakRuns = 0;
  const scripts = scriptCounts.fill(0);
  let extraBytes = 0;
  let previous = 0; // class of the previous unit
  let beforePrevious = 0;
  let runLength = 0; // length of the current digit or space run
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    let unit = unitClass[code] as number;
    switch (unit) {
      case LOWER: {
        if (previous === UPPER) {
          if (beforePrevious === UPPER) subwords++; // HTTPServer: the S starts a new piece
        } else if (previous !== LOWER) subwords++;
        // Most text is runs of lower-case letters: take the rest of the run in one tight loop.
        let next = index + 1;
        while (next < length) {
          const following = text.charCodeAt(next);
          if (following < 0x61 || following > 0x7a) break;
          next++;
        }
        if (next - index > longWord) subwords += Math.ceil((next - index - longWord) / longRunLetters);
        index = next - 1;
        break;
      }
      case UPPER:
        if (previous !== UPPER) {
          subwords++; // after a lower letter, or anything else
          runLength = 0;
        }
        runLength++;
        if (runLength > longWord && (runLength - longWord) % longRunLetters === 1) subwords++;
        break;
      case DIGIT:
        if (previous !== DIGIT) runLength = 0;
        if (runLength % 3 === 0) digitGroups++;
        runLength++;
        digits++;
        break;
      case PUNCT:
        if (previous !== PUNCT) punctuationRuns++;
        punctuation++;
        break;
      case SPACE:
        if (previous !== SPACE) runLength = 0;
        runLength++;
        if (runLength === 2) spaceRuns++;
        break;
      case BREAK:
        if (previous !== BREAK) lineBreakRuns++;
        break;
      default: {
        extraBytes += code < 0x800 ? 1 : 2;
        if (unit === HIGH_SURROGATE) {
          const next = text.charCodeAt(index + 1);
          if (next >= 0xdc00 && next <= 0xdfff) {
            // Two units, four bytes: the +2 above already counts the pair.
            unit = astralClass(((code - 0xd800) << 10) + (next - 0xdc00) + 0x10000);
            index++;
          } else unit = OTHER;
        } else if (unit === LOW_SURROGATE) unit = OTHER;
        scripts[unit] = (scripts[unit] as number) + 1;
      }
    }
    beforePrevious = previous;
    previous = unit;
  }
  sizes.utf8Bytes += length + extraBytes;
  return (
    table.subwords * subwords +
    table.digitGroups * digitGroups +
    table.digits * digits +
    table.punctuationRuns * punctuationRuns +
    table.punctuation * punctuation +
    table.spaceRuns * spaceRuns +
    table.lineBreakRuns * lineBreakRuns +
    table.han * (scripts[HAN] as number) +
    table.hangul * (scripts[HANGUL] as number) +
    table.cyrillic * (scripts[CYRILLIC] as number) +
    table.arabic * (scripts[ARABIC] as number) +
    table.indic * (scripts[INDIC] as number) +
    table.latinExtended * (scripts[LATINX] as number) +
    table.emoji * (scripts[EMOJI] as number) +
    table.otherScripts * (scripts[OTHER] as number)
  );
}

/**
 * Estimated tokens of a text: the pre-token count weighted by the family's table (findings.md P3), or by
 * the all-model table (P2) when `family` is missing or has no table. Errs high: a count that is short
 * overflows the window, one that is long only folds a little early. Empty text is 0.
 *
 * @param family a {@link TokenFamily} (see {@link modelFamily}); default: the all-model table.
 */
export function estimateTokens(text: string, family?: string): number {
  return Math.ceil(scanPreTokens(text, weightsFor(family), discardedSizes));
}

// Always passing sizes keeps the scan's call sites alike, which its speed depends on.
const discardedSizes: ScanSizes = { utf8Bytes: 0 };

/** Counts the tokens of one text; wrap {@link defaultTokenEstimator} to adjust it (cmdk `defaultFilter` style). */
export type TokenEstimator = (text: string, family?: string) => number;

/** The estimator the planner uses unless another is given: {@link estimateTokens}. */
export const defaultTokenEstimator: TokenEstimator = estimateTokens;

/** The UTF-8 length of a text in bytes, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    // A surrogate pair is two units and four bytes: one extra byte for each unit.
    if (unit >= 0x80) bytes += unit < 0x800 || (unit >= 0xd800 && unit <= 0xdfff) ? 1 : 2;
  }
  return bytes;
}
