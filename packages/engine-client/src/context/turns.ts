import type { ChatMessage } from "../messages.js";

/** One turn: indices into the message list, `from` inclusive, `to` exclusive. */
export interface TurnRange {
  readonly from: number;
  readonly to: number;
}

/**
 * Splits messages into turns. A turn is a person's message (role `user`) and every message after it up to
 * the next one; messages before the first person's message (a tool's start-up lines) belong to the first
 * turn. The last turn is the one being answered. No messages, no turns.
 *
 * @param start split only `messages[start..]` (the indices stay the list's own); default 0.
 */
export function splitTurns(messages: readonly ChatMessage[], start = 0): TurnRange[] {
  const turns: TurnRange[] = [];
  let from = start;
  let hasPersonMessage = messages[start]?.role === "user";
  for (let index = start + 1; index < messages.length; index++) {
    if ((messages[index] as ChatMessage).role !== "user") continue;
    if (hasPersonMessage) {
      turns.push({ from, to: index });
      from = index;
    }
    hasPersonMessage = true;
  }
  if (messages.length > start) turns.push({ from, to: messages.length });
  return turns;
}
