import type { ChatMessage, MessagePart } from "../messages.js";

/** The frame's tag name: the summary is context about the chat so far, not instructions. */
export const summaryFrameName = "earlier-in-this-chat";

const frameOpen = `<${summaryFrameName}>`;
const frameClose = `</${summaryFrameName}>`;

/** What separates the framed summary from the person's own text in the same text part. */
export const summaryFrameSeparator = "\n\n";

const escapes = /&(amp|lt|#\d{1,7});/g;
const summaryTagNames = ["earlier"] as const;

/** Letters that look like the Latin ones a tag name is made of (Cyrillic, Greek), folded to them. */
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

/** Non-ASCII code points already read: what each reads as (NFKC and look-alikes make this the slow part). */
const lettersRead = new Map<number, string | null>();

/** The Latin letter or digit a code point reads as (NFKC, lower case, look-alikes folded), or null. */
function letterOf(code: number): string | null {
  if (code < 0x80) {
    if (code >= 0x30 && code <= 0x39) return String.fromCharCode(code);
    if (code >= 0x61 && code <= 0x7a) return String.fromCharCode(code);
    if (code >= 0x41 && code <= 0x5a) return String.fromCharCode(code + 0x20);
    return null;
  }
  const known = lettersRead.get(code);
  if (known !== undefined) return known;
  const folded = String.fromCodePoint(code).normalize("NFKC").toLowerCase();
  const mapped = confusables[folded] ?? folded;
  const letter = mapped.length === 1 && /[a-z0-9]/.test(mapped) ? mapped : null;
  lettersRead.set(code, letter);
  return letter;
}

function isAsciiLetterOrDigit(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/**
 * Whether the text may hold a tag opener or an escape: most summaries hold neither (the request is built every
 * turn). The openers are the characters a reader takes for "<": the ASCII one and its look-alikes (fullwidth,
 * small form, angle quotation marks and brackets). Any of them may open a tag in a model's eyes.
 */
const mayNeedEscaping = /[<&\uff1c\ufe64\u2039\u3008\u2329\u27e8\u276e\u02c2\u1438\u276c]/;
/** The same characters, each place found in turn. */
const needsALook = /[<&\uff1c\ufe64\u2039\u3008\u2329\u27e8\u276e\u02c2\u1438\u276c]/g;
/** What after an "&" reads as an escape (9 characters at most). */
const escapeAfterAmpersand = /(?:amp|lt|#\d{1,7}|#x[0-9a-f]{1,6});/iy;

/** The code units a code point at `index` takes. */
function widthAt(text: string, index: number): number {
  return (text.codePointAt(index) as number) > 0xffff ? 2 : 1;
}

/** Where the last code point of `text` for which `test` holds starts, or -1. */
function lastWhere(text: string, test: (code: number) => boolean): number {
  for (let index = text.length - 1; index >= 0; index--) {
    let code = text.charCodeAt(index);
    // The second half of a pair: the code point starts one before.
    if (code >= 0xdc00 && code <= 0xdfff && index > 0) {
      const high = text.charCodeAt(index - 1);
      if (high >= 0xd800 && high <= 0xdbff) {
        index -= 1;
        code = text.codePointAt(index) as number;
      }
    }
    if (test(code)) return index;
  }
  return -1;
}

/**
 * Escapes, in one linear pass, every "<" (or look-alike) that could start one of the tags named, opening or
 * closing, in any case, with look-alike or fullwidth letters, and with anything that is not a letter or digit
 * around and inside the name ("‹ / Еarlier - In this_chat >"); and every one followed by nothing but such
 * characters, which would run into the frame's own closing tag. "<" becomes `&lt;`, a look-alike its numeric
 * escape (`&#8249;`). An "&" is escaped only where it would read as an escape (`&amp;`, `&lt;`, `&#60;`), so
 * ordinary text stays as written, and `&#60;earlier…` cannot pass for a tag once unescaped by a reader.
 *
 * Only the places of "<", its look-alikes and "&" are looked at; the letters after them are read once each
 * (where the next letter is, remembered), so a long text with many of them costs its length, not more.
 */
export function escapeFrameText(text: string, tagNames: readonly string[]): string {
  if (!mayNeedEscaping.test(text)) return text;
  const length = text.length;
  // Where the next letter or digit at or after each place is, filled in as it is asked for (-1: not yet known).
  const nextLetters = new Int32Array(length + 1).fill(-1);
  nextLetters[length] = length;
  const nextLetter = (from: number): number => {
    let at = from;
    while (nextLetters[at] === -1 && letterOf(text.codePointAt(at) as number) === null) at += widthAt(text, at);
    const found = nextLetters[at] === -1 ? at : (nextLetters[at] as number);
    for (let index = from; index < at; index += widthAt(text, index)) nextLetters[index] = found;
    nextLetters[at] = found;
    return found;
  };
  const lastLetter = lastWhere(text, (code) => letterOf(code) !== null);
  const lastAscii = lastWhere(text, isAsciiLetterOrDigit);
  const startsName = (from: number, name: string): boolean => {
    let at = nextLetter(from);
    for (let letter = 0; letter < name.length; letter++) {
      if (at === length || letterOf(text.codePointAt(at) as number) !== name[letter]) return false;
      at = nextLetter(at + widthAt(text, at));
    }
    return true;
  };
  // No letter or digit after it, or no ASCII one: the "<" runs into the frame's close.
  const startsTag = (from: number): boolean =>
    from > lastLetter || from > lastAscii || tagNames.some((name) => startsName(from, name));
  let escaped = "";
  let copiedTo = 0;
  needsALook.lastIndex = 0;
  for (let match = needsALook.exec(text); match !== null; match = needsALook.exec(text)) {
    const index = match.index;
    const code = text.charCodeAt(index);
    let replacement: string | null = null;
    if (code === 0x26) {
      escapeAfterAmpersand.lastIndex = index + 1;
      if (escapeAfterAmpersand.test(text)) replacement = "&amp;";
    } else if (startsTag(index + 1)) replacement = code === 0x3c ? "&lt;" : `&#${code};`;
    if (replacement === null) continue;
    escaped += text.slice(copiedTo, index) + replacement;
    copiedTo = index + 1;
  }
  return copiedTo === 0 ? text : escaped + text.slice(copiedTo);
}

function unescapeSummary(escaped: string): string {
  return escaped.replace(escapes, (_match, name: string) =>
    name === "lt" ? "<" : name === "amp" ? "&" : String.fromCodePoint(Number(name.slice(1))),
  );
}

/**
 * The summary inside `<earlier-in-this-chat>…</earlier-in-this-chat>`. Escaped so that no text inside it
 * (any case, any spacing) can close or reopen the frame: a `<` that could start the tag becomes `&lt;`, and
 * an `&` that would read as an escape becomes `&amp;`. Everything else is left as written.
 * {@link unframeSummary} gives the summary back exactly.
 */
export function frameSummary(summary: string): string {
  return `${frameOpen}\n${escapeFrameText(summary, summaryTagNames)}\n${frameClose}`;
}

/**
 * Reads a text that starts with a framed summary (as {@link frameSummary} or {@link buildRequestMessages}
 * wrote it): the summary, unescaped, and the rest of the text after the frame and its separator.
 * Null when the text does not start with the frame.
 */
export function unframeSummary(text: string): { readonly summary: string; readonly rest: string } | null {
  if (!text.startsWith(`${frameOpen}\n`)) return null;
  const end = text.indexOf(`\n${frameClose}`, frameOpen.length);
  if (end === -1) return null;
  const summary = unescapeSummary(text.slice(frameOpen.length + 1, end));
  let rest = text.slice(end + 1 + frameClose.length);
  if (rest.startsWith(summaryFrameSeparator)) rest = rest.slice(summaryFrameSeparator.length);
  return { summary, rest };
}

/**
 * The messages to send: the kept messages with the framed summary in front of the first person's message,
 * merged into its first part when that is text (a new text part in front otherwise). Built at request time;
 * never in the system prompt, never a message of its own, never in the model's messages (thinking
 * signatures travel back untouched). Returns new objects where it changes something and never mutates
 * `kept`. An empty or missing summary sends `kept` as it is. Only when no kept message is the person's
 * (before the person's first message) does the frame get a user message of its own, first, with the first
 * kept message's `seq`.
 */
export function buildRequestMessages(kept: readonly ChatMessage[], summary?: string | null): ChatMessage[] {
  if (!summary) return [...kept];
  const framed = frameSummary(summary);
  const index = kept.findIndex((message) => message.role === "user");
  if (index === -1) {
    return [{ seq: kept[0]?.seq ?? 0, role: "user", parts: [{ type: "text", text: framed }] }, ...kept];
  }
  const first = kept[index] as ChatMessage;
  const [head, ...others] = first.parts;
  const parts: MessagePart[] =
    head?.type === "text"
      ? [{ ...head, text: framed + summaryFrameSeparator + head.text }, ...others]
      : [{ type: "text", text: framed }, ...first.parts];
  const request = [...kept];
  request[index] = { ...first, parts };
  return request;
}
