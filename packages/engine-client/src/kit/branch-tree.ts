import type { TurnInput } from "../engine.js";
import { TurnSequenceError } from "../errors.js";
import type { BranchMessage, ChatMessage } from "../messages.js";
import { messageParent, newestLeaf, pathRanges, treeOfLog, versionsOf } from "../transcript/branch-tree.js";
import { type OpenedTurn, openingMessage } from "./turn-open.js";

/** The seq a message follows: its `parent`, or the one before it (-1 for the log's first: the root). */
export function parentOf(message: Pick<ChatMessage, "seq" | "parent">): number {
  return messageParent(message);
}

/** One past the highest seq of a log (every branch counted): where the next message goes. */
export function nextLogSeq(log: readonly Pick<ChatMessage, "seq">[]): number {
  let highest = -1;
  for (const message of log) if (message.seq > highest) highest = message.seq;
  return highest + 1;
}

// A whole log held in memory (the mock engine's) read with the tree's own rules (transcript/branch-tree.ts), which
// the stores and the API engine read from the forks alone.

function inSeqOrder(log: readonly ChatMessage[]): ChatMessage[] {
  return [...log].sort((a, b) => a.seq - b.seq);
}

/** The path from the root to `leaf`, in seq order (empty when `leaf` is not in the log). */
export function branchPath(log: readonly ChatMessage[], leaf: number): ChatMessage[] {
  const ordered = inSeqOrder(log);
  const bySeq = new Map(ordered.map((message) => [message.seq, message]));
  if (!bySeq.has(leaf)) return [];
  return pathRanges(treeOfLog(ordered), leaf).flatMap((range) =>
    Array.from({ length: range.to - range.from }, (_, index) => bySeq.get(range.from + index)).filter(
      (message): message is ChatMessage => message !== undefined,
    ),
  );
}

/**
 * The newest leaf of the branches through `seq`: the highest seq among `seq` and its descendants (it has no
 * children, since a child's seq is above its parent's). Null when `seq` is not in the log.
 */
export function newestLeafThrough(log: readonly ChatMessage[], seq: number): number | null {
  const ordered = inSeqOrder(log);
  if (!ordered.some((message) => message.seq === seq)) return null;
  return newestLeaf(treeOfLog(ordered), seq);
}

/**
 * The messages of a path as a snapshot shows them: each with `siblings` (its versions: the messages of the log
 * with the same parent and role, in seq order) when it has other versions.
 */
export function withSiblings(path: readonly ChatMessage[], log: readonly ChatMessage[]): BranchMessage[] {
  const ordered = inSeqOrder(log);
  const tree = treeOfLog(ordered);
  const roles = new Map(ordered.map((message) => [message.seq, message.role]));
  return path.map((message) => {
    const versions = versionsOf(tree, message.seq, message.role, (seq) => roles.get(seq));
    return versions.length < 2 ? message : { ...message, siblings: versions };
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
  const message = openingMessage(input, parent, now);
  return { message, retrying: false, answer: { seq: input.seq + 1, parent: input.seq } };
}
