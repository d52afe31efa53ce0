import type { ChatMessage, MessagePart } from "../messages.js";

/** The frame's tag name: the summary is context about the chat so far, not instructions. */
export const summaryFrameName = "earlier-in-this-chat";

const frameOpen = `<${summaryFrameName}>`;
const frameClose = `</${summaryFrameName}>`;

/** What separates the framed summary from the person's own text in the same text part. */
export const summaryFrameSeparator = "\n\n";

const escapes = /&(amp|lt|#\d{1,7});/g;
const summaryTagNames = ["earlier"] as const;

/**
 * Characters a reader takes for "<": the ASCII one and its look-alikes (fullwidth, small form, angle
 * quotation marks and brackets). Any of them may open a tag in a model's eyes.
 */
const openers = new Set([0x3c, 0xff1c, 0xfe64, 0x2039, 0x3008, 0x2329, 0x27e8, 0x276e, 0x02c2, 0x1438, 0x276c]);

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

/** The Latin letter or digit a character reads as (NFKC, lower case, look-alikes folded), or null. */
function letterOf(char: string): string | null {
  const unit = char.charCodeAt(0);
  if (unit < 0x80) {
    const lower = char.toLowerCase();
    return /[a-z0-9]/.test(lower) ? lower : null;
  }
  const folded = char.normalize("NFKC").toLowerCase();
  const mapped = confusables[folded] ?? folded;
  return mapped.length === 1 && /[a-z0-9]/.test(mapped) ? mapped : null;
}

/** Whether the text may hold a tag opener or an escape: most summaries hold neither (the request is built every turn). */
const mayNeedEscaping = /[<&\uff1c\ufe64\u2039\u3008\u2329\u27e8\u276e\u02c2\u1438\u276c]/;

/**
 * Escapes, in one linear pass, every "<" (or look-alike) that could start one of the tags named, opening or
 * closing, in any case, with look-alike or fullwidth letters, and with anything that is not a letter or digit
 * around and inside the name ("‹ / Еarlier - In this_chat >"); and every one followed by nothing but such
 * characters, which would run into the frame's own closing tag. "<" becomes `&lt;`, a look-alike its numeric
 * escape (`&#8249;`). An "&" is escaped only where it would read as an escape (`&amp;`, `&lt;`, `&#60;`), so
 * ordinary text stays as written, and `&#60;earlier…` cannot pass for a tag once unescaped by a reader.
 */
export function escapeFrameText(text: string, tagNames: readonly string[]): string {
  if (!mayNeedEscaping.test(text)) return text;
  const chars = Array.from(text);
  const length = chars.length;
  const letters = chars.map(letterOf);
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
