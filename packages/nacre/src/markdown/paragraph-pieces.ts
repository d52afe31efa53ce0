import remarkGfm from "remark-gfm";
import remarkParse from "remark-parse";
import { unified } from "unified";

/**
 * A paragraph being written, cut into finished pieces and the tail still growing. `pieces` joined with `tail`
 * are the paragraph's exact source. Each piece ends in the run of spaces after a sentence (or inside a long
 * one), the next starts as paragraph text does, and no inline construct (emphasis, code span, link or image
 * bracket, autolink, raw HTML) is open across a cut, so the paragraph renders as its pieces' inline content
 * one after another, exactly as it would whole.
 */
export interface ParagraphPieces {
  readonly pieces: readonly string[];
  readonly tail: string;
}

/** The state of cutting one growing paragraph; feed it the whole text each time, it reads only what is new. */
export interface PieceSplitter {
  text: string;
  pieces: string[];
  /** Where the tail starts: the end of the last piece. */
  cut: number;
  /** Cut candidates before this offset have been looked at. */
  scanned: number;
  /** A piece that failed the check is tried again only once it reaches this length (amortised parsing). */
  retryAt: number;
  /** Where the last line starts, and whether its start was read far enough to know it continues the paragraph. */
  lineStart: number;
  lineDecided: boolean;
  /** A line with text was checked. */
  seenText: boolean;
  /** A line that cannot continue a paragraph arrived: the text is not one paragraph (it never will be again). */
  notParagraph: boolean;
}

export function createPieceSplitter(): PieceSplitter {
  return {
    text: "",
    pieces: [],
    cut: 0,
    scanned: 0,
    retryAt: 0,
    lineStart: 0,
    lineDecided: false,
    seenText: false,
    notParagraph: false,
  };
}

/** A piece this long is cut at any run of spaces, so that a run-on sentence does not grow the tail forever. */
const longPiece = 240;

/**
 * The start of a line that can only be paragraph text (continuing the paragraph when it is not the first): a
 * letter, a digit not opening an ordered list, `**`/`__` before a word, a code span, an opening quote or
 * parenthesis. Anything else (`#`, `>`, `-`, `*`, `+`, `|`, `[`, `<`, `=`, indentation, `1.`) might start or
 * end another block (a list, a setext heading underline, a table's delimiter row, a definition) and is left to
 * the whole-block parse.
 */
const paragraphLineStart = /^(?:\d{1,9}(?![.)\d])|\p{L}|\*\*[^\s*]|__[^\s_]|`[^`]|[("'“‘¿¡])/u;
/** How much of a line `paragraphLineStart` needs to decide (a shorter last line is checked again later). */
const lineStartLength = 11;

/** Characters that can open or close an inline construct (a cut is checked by a parse if the piece has one). */
const inlineSyntax = /[*_~`[\]<]/;
/** A place to cut: a run of spaces inside a line (after a sentence end, or anywhere in a long piece). */
const cutCandidate = / +(?=\S)/gu;
/**
 * What a piece (and the tail) may start with, so that on its own it is paragraph text as it is in the whole:
 * a letter, `**`/`__` before a word, a code span, an opening quote or parenthesis (not `-`, `#`, `>`, `1.`...).
 */
const pieceStart = /^(?:\p{L}|\*\*[^\s*]|__[^\s_]|`[^`]|[("'“‘¿¡])/u;
const pieceStartLength = 3;

let processor: ReturnType<typeof createProcessor> | null = null;
function createProcessor() {
  return unified().use(remarkParse).use(remarkGfm).freeze();
}

interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
}

/** The text nodes' values in document order; null when the tree holds raw HTML (a tag can span a cut). */
function textsOf(node: MdNode, texts: string[]): string[] | null {
  if (node.type === "html") return null;
  if (node.type === "text") texts.push(node.value ?? "");
  for (const child of node.children ?? []) if (!textsOf(child, texts)) return null;
  return texts;
}

const space = /\s/;
const wordCharacter = /[\p{L}\p{N}]/u;
const delimiterRun = /([*_~])\1*/g;
/** A code-span backtick, or a `<` that could begin an autolink or a tag. */
const unusedOpener = /`|<(?![\s\d])/;

/**
 * Whether the text a piece parses to keeps something a later delimiter or bracket could still pair with: a
 * backtick, a `<` before a name, a `[` never closed, or a `*`/`_`/`~` run that can open or close (one with
 * spaces on both sides cannot, nor `_` inside a word). A run at a text node's edge counts as open (its
 * neighbour is in another node). A `[`...`]` that did not make a link is spent: nothing later reuses it.
 */
function leavesOpen(texts: readonly string[]): boolean {
  let openBrackets = 0;
  for (const value of texts) {
    if (unusedOpener.test(value)) return true;
    for (const run of value.matchAll(delimiterRun)) {
      const before = value[run.index - 1];
      const after = value[run.index + run[0].length];
      if (before === undefined || after === undefined) return true;
      if (space.test(before) && space.test(after)) continue;
      if (run[1] === "_" && wordCharacter.test(before) && wordCharacter.test(after)) continue;
      return true;
    }
    for (const character of value) {
      if (character === "[") openBrackets += 1;
      else if (character === "]" && openBrackets > 0) openBrackets -= 1;
    }
  }
  return openBrackets > 0;
}

/**
 * Whether `piece` (one paragraph's worth of source, without its trailing spaces) leaves no inline construct
 * open: with no syntax character at all, trivially; else it parses to one paragraph with no raw HTML whose
 * text keeps nothing a later delimiter or bracket could pair with (`leavesOpen`).
 */
export function isSettledPiece(piece: string): boolean {
  if (!inlineSyntax.test(piece)) return true;
  processor ??= createProcessor();
  const tree = processor.parse(piece) as MdNode;
  const [paragraph, ...rest] = tree.children ?? [];
  if (rest.length > 0 || paragraph?.type !== "paragraph") return false;
  const texts = textsOf(paragraph, []);
  return texts !== null && !leavesOpen(texts);
}

/** Checks each line's start once it is long enough to tell (or complete), from `state.lineStart` on. */
function checkLines(state: PieceSplitter): void {
  const { text } = state;
  for (;;) {
    const start = state.lineStart;
    const end = text.indexOf("\n", start);
    if (!state.lineDecided) {
      const line = text.slice(start, end === -1 ? Math.min(text.length, start + lineStartLength) : end);
      const blank = line.trim() === "";
      // Blank lines may come before the text, never inside it (one would end the paragraph).
      if (blank ? state.seenText && end !== -1 : !paragraphLineStart.test(line)) {
        state.notParagraph = true;
        return;
      }
      if (end !== -1 || (!blank && line.length >= lineStartLength)) {
        state.lineDecided = true;
        if (!blank) state.seenText = true;
      }
    }
    if (end === -1) return;
    state.lineStart = end + 1;
    state.lineDecided = false;
  }
}

/**
 * Cuts `text`, a paragraph being written, into finished pieces and a tail, reading only what arrived since the
 * last call when `text` grew from the last one (any other text starts over). Finished pieces keep their
 * identity. Null when `text` is not (or is no longer) one plain paragraph: render it whole.
 */
export function splitParagraph(state: PieceSplitter, text: string): ParagraphPieces | null {
  if (!text.startsWith(state.text)) Object.assign(state, createPieceSplitter());
  state.text = text;
  checkLines(state);
  if (state.notParagraph) return null;
  cutCandidate.lastIndex = state.scanned;
  for (let match = cutCandidate.exec(text); match; match = cutCandidate.exec(text)) {
    const spacesAt = match.index;
    const cutAt = spacesAt + match[0].length;
    const next = text.slice(cutAt, cutAt + pieceStartLength);
    if (!pieceStart.test(next)) {
      // Too little of what follows arrived to tell: look at these spaces again next time.
      if (cutAt + pieceStartLength > text.length) {
        state.scanned = spacesAt;
        return { pieces: state.pieces, tail: text.slice(state.cut) };
      }
      state.scanned = cutAt;
      continue;
    }
    state.scanned = cutAt;
    const sentenceEnd = /[.!?]/.test(text[spacesAt - 1] ?? "");
    if (!sentenceEnd && cutAt - state.cut < longPiece) continue;
    if (cutAt < state.retryAt) continue;
    if (isSettledPiece(text.slice(state.cut, spacesAt))) {
      state.pieces = [...state.pieces, text.slice(state.cut, cutAt)];
      state.cut = cutAt;
      state.retryAt = 0;
    } else {
      // Something is open: try again when the piece is twice as long, so a construct that never closes costs
      // a parse per doubling, not one per sentence.
      state.retryAt = state.cut + 2 * (cutAt - state.cut);
    }
  }
  // A run of spaces at the very end may yet be followed by a piece's start: look at it again next time.
  state.scanned = Math.max(state.scanned, text.length - (/ *$/.exec(text)?.[0].length ?? 0));
  return { pieces: state.pieces, tail: text.slice(state.cut) };
}

/**
 * Anything that makes paragraph text more than the characters it is: inline syntax, an entity, an escape, a
 * line break (its spaces are trimmed), NUL (replaced), an autolink literal (`www.`, `://`, an `@` address).
 */
const notPlain = /[*_~`[\]<&\\@\r\n\0]|www\.|:\/\//i;

/**
 * What a paragraph of `source` renders as when it is plain text: the same characters, its final spaces and
 * tabs trimmed as a paragraph's are. Null when it is not plain (or starts with a space): parse it instead.
 */
export function plainParagraphText(source: string): string | null {
  if (notPlain.test(source) || !/^\S/.test(source)) return null;
  let end = source.length;
  while (source[end - 1] === " " || source[end - 1] === "\t") end -= 1;
  return source.slice(0, end);
}
