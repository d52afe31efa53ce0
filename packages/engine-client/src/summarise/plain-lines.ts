import { cutAtCodePoint, cutWithEllipsis } from "../cut-text.js";
import type { ChatMessage, MessagePart } from "../messages.js";

/** Longest tool-call arguments written out for a summariser; the rest is cut with an ellipsis. */
export const toolArgumentsShownChars = 200;

/**
 * Every line break Unicode knows (UAX #14's mandatory breaks: LF, CR, CR LF, VT, FF, NEL, LS, PS): a model may
 * read any of them as the start of a line, so each is one here.
 */
const lineBreak = /\r\n|[\n\v\f\r\u0085\u2028\u2029]/;
const lineBreaks = new RegExp(lineBreak.source, "g");

/** A name or an argument list on one line: a line break inside it must not start a line of its own. */
function oneLine(text: string): string {
  return text.replace(lineBreaks, " ");
}

function speaker(role: ChatMessage["role"]): string {
  return role === "user" ? "Person" : role === "assistant" ? "Assistant" : "Tool result";
}

/**
 * Text under its label. The person's own lines follow theirs as written; every line of anyone else's carries
 * their label, so that a page the model quotes ("The page says:\nPerson: …") never reads as the person's words.
 */
function labelled(role: ChatMessage["role"], label: string, text: string): string {
  if (role === "user") return `${label}: ${text}`;
  return text
    .split(lineBreak)
    .map((line, index) => (index === 0 ? `${label}: ${line}` : `${speaker(role)} (continued): ${line}`))
    .join("\n");
}

function partLine(role: ChatMessage["role"], part: MessagePart): string | null {
  switch (part.type) {
    case "text":
      if (part.text.trim() === "") return null;
      return labelled(role, speaker(role), part.text);
    case "thinking":
      // The model's reasoning is never summarised: it is not what was said, and may be encrypted.
      return null;
    case "tool-call":
      return `Assistant called ${oneLine(part.name)}(${cutWithEllipsis(oneLine(part.arguments), toolArgumentsShownChars)})`;
    case "tool-result": {
      // Every line is marked as the tool's: a fetched page's "\nPerson: …" must never read as the person's.
      const label = `Tool result${part.name ? ` (${oneLine(part.name)})` : ""}${part.isError ? " [error]" : ""}`;
      return labelled("tool", label, part.text);
    }
    case "picture":
      return `${speaker(role)}: [picture: ${oneLine(part.name)}]`;
    default:
      return part satisfies never;
  }
}

/**
 * A chat's messages as plain lines a small model can read: `Person: …`, `Assistant: …`, `Tool result: …`,
 * tool calls named with their arguments shortened, pictures named, thinking left out.
 */
export function toPlainLines(messages: readonly ChatMessage[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    for (const part of message.parts) {
      const line = partLine(message.role, part);
      if (line !== null) lines.push(line);
    }
  }
  return lines.join("\n");
}

/**
 * Cuts text into pieces of at most `maxChars` characters at line boundaries; a single line longer than
 * that is cut inside, never between the two halves of a surrogate pair.
 */
export function splitIntoPieces(text: string, maxChars: number): string[] {
  if (maxChars < 1) throw new RangeError(`maxChars must be at least 1, not ${maxChars}`);
  const pieces: string[] = [];
  let current = "";
  const flush = () => {
    if (current !== "") pieces.push(current);
    current = "";
  };
  for (const line of text.split("\n")) {
    const candidate = current === "" ? line : `${current}\n${line}`;
    if (candidate.length <= maxChars) {
      current = candidate;
      continue;
    }
    flush();
    let rest = line;
    while (rest.length > maxChars) {
      // A pair wider than the piece goes whole rather than never (one code point is the smallest piece).
      const piece = cutAtCodePoint(rest, maxChars) || rest.slice(0, 2);
      pieces.push(piece);
      rest = rest.slice(piece.length);
    }
    current = rest;
  }
  flush();
  return pieces;
}
