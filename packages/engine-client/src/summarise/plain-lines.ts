import type { ChatMessage, MessagePart } from "../messages.js";

/** Longest tool-call arguments written out for a summariser; the rest is cut with an ellipsis. */
export const toolArgumentsShownChars = 200;

function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}…`;
}

function speaker(role: ChatMessage["role"]): string {
  return role === "user" ? "Person" : role === "assistant" ? "Assistant" : "Tool result";
}

function partLine(role: ChatMessage["role"], part: MessagePart): string | null {
  switch (part.type) {
    case "text":
      if (part.text.trim() === "") return null;
      return `${speaker(role)}: ${part.text}`;
    case "thinking":
      // The model's reasoning is never summarised: it is not what was said, and may be encrypted.
      return null;
    case "tool-call":
      return `Assistant called ${part.name}(${shorten(part.arguments, toolArgumentsShownChars)})`;
    case "tool-result":
      return `Tool result${part.name ? ` (${part.name})` : ""}${part.isError ? " [error]" : ""}: ${part.text}`;
    case "picture":
      return `${speaker(role)}: [picture: ${part.name}]`;
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
      let cut = maxChars;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
      pieces.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    current = rest;
  }
  flush();
  return pieces;
}
