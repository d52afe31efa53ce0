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
 * Where a branched log takes its next message (engines with the `branches` capability): the log's length, every
 * branch counted, and the active branch's last message, which a message without `parent` follows.
 */
export interface TreePlace {
  readonly nextSeq: number;
  readonly activeLeaf: number;
}

/**
 * Checks `input.seq` against the log and builds the turn's opening message. A retry must name the log's
 * last message, and that the person's; anything else must go at {@link nextSeq}. `log` is the active branch as
 * held; on a branched log, `tree` says where the next message goes, and `input.parent` may name any message of
 * the log (-1: none), an edit, which the message then carries. Without `tree`, `parent` may only be the log's
 * last message. Throws `TurnSequenceError`.
 */
export function openTurn(
  input: TurnInput,
  log: readonly ChatMessage[],
  now: () => number,
  tree?: TreePlace,
): OpenedTurn {
  const last = log.at(-1);
  if (input.retry === true && last?.role === "user" && last.seq === input.seq) {
    return { message: last, retrying: true };
  }
  const expectedSeq = tree?.nextSeq ?? nextSeq(log);
  if (input.seq !== expectedSeq) {
    throw new TurnSequenceError({ chatId: input.chatId, expectedSeq, actualSeq: input.seq });
  }
  const leaf = tree?.activeLeaf ?? expectedSeq - 1;
  const parent = input.parent ?? leaf;
  const allowed = tree ? Number.isSafeInteger(parent) && parent >= -1 && parent < expectedSeq : parent === leaf;
  // A parent the log does not hold is refused like a stale seq: the error says where the next message goes.
  if (!allowed) throw new TurnSequenceError({ chatId: input.chatId, expectedSeq, actualSeq: input.seq });
  const message = openingMessage(input, parent, now);
  return { message, retrying: false };
}

/**
 * The message a turn opens with at `input.seq`, following `parent`: the tool results handed back, else the person's
 * words and pictures. It carries `parent` only when that is not the message before it.
 */
export function openingMessage(input: TurnInput, parent: number, now: () => number): ChatMessage {
  const place = parent === input.seq - 1 ? {} : { parent };
  return input.toolResults?.length
    ? { seq: input.seq, role: "tool", parts: [...input.toolResults], createdAt: now(), ...place }
    : {
        seq: input.seq,
        role: "user",
        parts: [{ type: "text", text: input.text }, ...(input.attachments ?? [])],
        createdAt: now(),
        ...(input.continuation ? { continuation: true } : {}),
        ...place,
      };
}
