import type { TurnInput } from "../engine.js";
import { TurnSequenceError } from "../errors.js";
import type { ChatMessage } from "../messages.js";

/** Where the next message goes in a log: one past the last `seq`, 0 for an empty log. */
export function nextSeq(messages: readonly Pick<ChatMessage, "seq">[]): number {
  return (messages.at(-1)?.seq ?? -1) + 1;
}

/** A turn accepted against the chat's log. */
export interface OpenedTurn {
  /** The message the turn answers: the person's, the host's tool results, or (a retry) the log's last. */
  readonly message: ChatMessage;
  /** A retry answers a message already in the log: nothing is appended. */
  readonly retrying: boolean;
}

/**
 * Checks `input.seq` against the log and builds the turn's opening message. A retry must name the log's
 * last message, and that the person's; anything else must go at {@link nextSeq}. Throws `TurnSequenceError`.
 */
export function openTurn(input: TurnInput, log: readonly ChatMessage[], now: () => number): OpenedTurn {
  const last = log.at(-1);
  if (input.retry === true && last?.role === "user" && last.seq === input.seq) {
    return { message: last, retrying: true };
  }
  const expectedSeq = nextSeq(log);
  if (input.seq !== expectedSeq) {
    throw new TurnSequenceError({ chatId: input.chatId, expectedSeq, actualSeq: input.seq });
  }
  const message: ChatMessage = input.toolResults?.length
    ? { seq: input.seq, role: "tool", parts: [...input.toolResults], createdAt: now() }
    : {
        seq: input.seq,
        role: "user",
        parts: [{ type: "text", text: input.text }, ...(input.attachments ?? [])],
        createdAt: now(),
        ...(input.continuation ? { continuation: true } : {}),
      };
  return { message, retrying: false };
}
