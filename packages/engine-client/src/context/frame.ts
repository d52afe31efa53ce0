import type { ChatMessage, MessagePart } from "../messages.js";

/** The frame's tag name: the summary is context about the chat so far, not instructions. */
export const summaryFrameName = "earlier-in-this-chat";

const frameOpen = `<${summaryFrameName}>`;
const frameClose = `</${summaryFrameName}>`;

/** What separates the framed summary from the person's own text in the same text part. */
export const summaryFrameSeparator = "\n\n";

const escapes = /&(amp|lt);/g;
const tagName = "earlier";

function isLetterOrDigit(unit: number): boolean {
  return (unit >= 0x30 && unit <= 0x39) || (unit >= 0x41 && unit <= 0x5a) || (unit >= 0x61 && unit <= 0x7a);
}

/**
 * Escapes, in one linear pass, every "<" that could start the frame's tag, opening or closing, in any case and
 * with anything that is not a letter or digit around and inside the name ("< / Earlier - In this_chat >"), and
 * every "<" followed by nothing but such characters, which would run into the frame's own closing tag.
 * Matching more than the exact name costs nothing: the "<" is only escaped, and comes back on unframing.
 * An "&" is escaped only where it would read as one of the two escapes, so ordinary text stays as written.
 */
function escapeSummary(summary: string): string {
  // Most summaries have neither character: nothing to escape, and no table to build (the request is framed every turn).
  if (!summary.includes("<") && !summary.includes("&")) return summary;
  const length = summary.length;
  // nextLetter[i]: the first letter or digit at or after i (length when there is none).
  const nextLetter = new Int32Array(length + 1);
  nextLetter[length] = length;
  for (let index = length - 1; index >= 0; index--) {
    nextLetter[index] = isLetterOrDigit(summary.charCodeAt(index)) ? index : (nextLetter[index + 1] as number);
  }
  const startsTag = (from: number): boolean => {
    let at = nextLetter[from] as number;
    if (at === length) return true;
    for (let letter = 0; letter < tagName.length; letter++) {
      if (at === length || (summary.charCodeAt(at) | 0x20) !== tagName.charCodeAt(letter)) return false;
      at = nextLetter[at + 1] as number;
    }
    return true;
  };
  let escaped = "";
  let copied = 0;
  for (let index = 0; index < length; index++) {
    const unit = summary.charCodeAt(index);
    let replacement: string | null = null;
    if (unit === 0x26 && (summary.startsWith("amp;", index + 1) || summary.startsWith("lt;", index + 1))) {
      replacement = "&amp;";
    } else if (unit === 0x3c && startsTag(index + 1)) replacement = "&lt;";
    if (replacement === null) continue;
    escaped += summary.slice(copied, index) + replacement;
    copied = index + 1;
  }
  return copied === 0 ? summary : escaped + summary.slice(copied);
}

function unescapeSummary(escaped: string): string {
  return escaped.replace(escapes, (_match, name: string) => (name === "lt" ? "<" : "&"));
}

/**
 * The summary inside `<earlier-in-this-chat>…</earlier-in-this-chat>`. Escaped so that no text inside it
 * (any case, any spacing) can close or reopen the frame: a `<` that could start the tag becomes `&lt;`, and
 * an `&` that would read as an escape becomes `&amp;`. Everything else is left as written.
 * {@link unframeSummary} gives the summary back exactly.
 */
export function frameSummary(summary: string): string {
  return `${frameOpen}\n${escapeSummary(summary)}\n${frameClose}`;
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
