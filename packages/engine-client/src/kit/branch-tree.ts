import type { TurnInput } from "../engine.js";
import { TurnSequenceError } from "../errors.js";
import type { BranchMessage, ChatMessage } from "../messages.js";
import type { OpenedTurn } from "./turn-open.js";

/** The seq a message follows: its `parent`, or the one before it (-1 for the log's first: the root). */
export function parentOf(message: Pick<ChatMessage, "seq" | "parent">): number {
  return message.parent ?? message.seq - 1;
}

/** The `parent` field a message at `seq` following `parent` carries: none when it continues `seq - 1`. */
export function parentField(seq: number, parent: number): { readonly parent?: number } {
  return parent === seq - 1 ? {} : { parent };
}

/** One past the highest seq of a log (every branch counted): where the next message goes. */
export function nextLogSeq(log: readonly Pick<ChatMessage, "seq">[]): number {
  let highest = -1;
  for (const message of log) if (message.seq > highest) highest = message.seq;
  return highest + 1;
}

function bySeq(log: readonly ChatMessage[]): Map<number, ChatMessage> {
  return new Map(log.map((message) => [message.seq, message]));
}

/** The path from the root to `leaf`, in seq order (empty when `leaf` is not in the log). */
export function branchPath(log: readonly ChatMessage[], leaf: number): ChatMessage[] {
  const messages = bySeq(log);
  const path: ChatMessage[] = [];
  let message = messages.get(leaf);
  while (message) {
    path.push(message);
    message = messages.get(parentOf(message));
  }
  return path.reverse();
}

/**
 * The newest leaf of the branches through `seq`: the highest seq among `seq` and its descendants (it has no
 * children, since a child's seq is above its parent's). Null when `seq` is not in the log.
 */
export function newestLeafThrough(log: readonly ChatMessage[], seq: number): number | null {
  const sorted = [...log].sort((a, b) => a.seq - b.seq);
  if (!sorted.some((message) => message.seq === seq)) return null;
  const below = new Set([seq]);
  let newest = seq;
  for (const message of sorted) {
    if (message.seq <= seq || !below.has(parentOf(message))) continue;
    below.add(message.seq);
    newest = message.seq;
  }
  return newest;
}

/**
 * The messages of a path as a snapshot shows them: each with `siblings` (the seqs of every message of the log
 * with the same parent and role, in seq order) when it has other versions.
 */
export function withSiblings(path: readonly ChatMessage[], log: readonly ChatMessage[]): BranchMessage[] {
  const versions = new Map<string, number[]>();
  for (const message of log) {
    const key = `${parentOf(message)}:${message.role}`;
    const seqs = versions.get(key);
    if (seqs) seqs.push(message.seq);
    else versions.set(key, [message.seq]);
  }
  return path.map((message) => {
    const seqs = versions.get(`${parentOf(message)}:${message.role}`) ?? [];
    if (seqs.length < 2) return message;
    return { ...message, siblings: [...seqs].sort((a, b) => a - b) };
  });
}

/** A turn accepted against a log that is a tree, and where its answer goes. */
export interface OpenedBranchTurn extends OpenedTurn {
  /** The seq the turn's answer takes and the message it follows. */
  readonly answer: { readonly seq: number; readonly parent: number };
}

/**
 * Checks a turn against a tree-shaped log whose active branch ends at `activeLeaf`, and builds its opening
 * message. A retry names any person's message of the active branch (regenerate: the answer is a new version
 * beside the old one); anything else goes at the log's next seq, following `input.parent` (an edit: the
 * parent of the message it replaces, -1 for the first) or the active leaf. Throws `TurnSequenceError`.
 */
export function openBranchTurn(
  input: TurnInput,
  log: readonly ChatMessage[],
  activeLeaf: number,
  now: () => number,
): OpenedBranchTurn {
  const expectedSeq = nextLogSeq(log);
  if (input.retry === true) {
    const onBranch = branchPath(log, activeLeaf).find((message) => message.seq === input.seq);
    if (onBranch?.role === "user") {
      return { message: onBranch, retrying: true, answer: { seq: expectedSeq, parent: onBranch.seq } };
    }
  }
  const parent = input.parent ?? activeLeaf;
  const parentKnown = parent === -1 || log.some((message) => message.seq === parent);
  if (input.seq !== expectedSeq || !parentKnown) {
    throw new TurnSequenceError({ chatId: input.chatId, expectedSeq, actualSeq: input.seq });
  }
  const place = parentField(input.seq, parent);
  const message: ChatMessage = input.toolResults?.length
    ? { seq: input.seq, role: "tool", parts: [...input.toolResults], createdAt: now(), ...place }
    : {
        seq: input.seq,
        role: "user",
        parts: [{ type: "text", text: input.text }, ...(input.attachments ?? [])],
        createdAt: now(),
        ...(input.continuation ? { continuation: true } : {}),
        ...place,
      };
  return { message, retrying: false, answer: { seq: input.seq + 1, parent: input.seq } };
}
