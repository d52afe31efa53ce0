import { TurnSequenceError } from "../errors.js";
import type { ChatMessage } from "../messages.js";
import { branchFoldOf } from "./branch-folds.js";
import {
  branchTree,
  growTree,
  newestLeaf,
  pageOfRanges,
  pathRanges,
  rangesFrom,
  type SeqRange,
} from "./branch-tree.js";
import type { ChatReading, ReadChatOptions } from "./chat-store.js";
import { keptStart, type TranscriptFile } from "./transcript-file.js";

/** What a store reads a chat with (inside its queue for the chat): {@link readChatWith} decides what to read. */
export interface ChatReadSteps {
  /** The chat read (for the errors). */
  readonly chatId: string;
  /** The log's length and the transcript (null when none), checked with `check` (given that length) as `readTranscript` checks. */
  head(check: ReadChatOptions["check"]): Promise<{
    readonly nextSeq: number;
    readonly transcript: TranscriptFile | null;
  }>;
  /** The log's messages with seqs from `from` to `to` (excluded), `to` at most the log's length, checked as `readLog` checks. */
  range(from: number, to: number): Promise<ChatMessage[]>;
}

/**
 * Where the transcript's record of the tree ends: its `through`; for a file without one (written before branches)
 * its kept part's start, since that part is read anyway and every message before it is one branch; 0 without a
 * file. The messages from there on are read to find their forks.
 */
function recordedThrough(transcript: TranscriptFile | null, nextSeq: number): number {
  if (transcript === null) return 0;
  return Math.min(nextSeq, transcript.branches?.through ?? keptStart(transcript, nextSeq));
}

/** The union of sorted ranges, merged where they touch. */
function unionOf(ranges: readonly SeqRange[]): SeqRange[] {
  const sorted = [...ranges].filter((range) => range.to > range.from).sort((a, b) => a.from - b.from);
  const merged: SeqRange[] = [];
  for (const range of sorted) {
    const last = merged.at(-1);
    if (last && range.from <= last.to) merged[merged.length - 1] = { from: last.from, to: Math.max(last.to, range.to) };
    else merged.push(range);
  }
  return merged;
}

/**
 * `ChatStore.readChat` on a store's two steps: the state first, then the messages appended since the transcript
 * recorded the tree (for their forks), then the branch's kept part and page as seq ranges along its path (each
 * run of consecutive seqs one read, runs that touch merged). The one rule of what a chat read holds.
 */
export async function readChatWith(steps: ChatReadSteps, options: ReadChatOptions = {}): Promise<ChatReading> {
  const { check, page } = options;
  const { nextSeq, transcript } = await steps.head(check);
  const through = recordedThrough(transcript, nextSeq);
  const tail = through < nextSeq ? await steps.range(through, nextSeq) : [];
  const tree = growTree(branchTree(through, transcript?.branches?.forks ?? []), tail);
  const recordedLeaf = transcript?.branches?.activeLeaf;
  // Messages appended after the record continue the branch they were written on: the log's last is the leaf.
  const activeLeaf = tail.length > 0 || recordedLeaf === undefined ? nextSeq - 1 : Math.min(recordedLeaf, nextSeq - 1);
  let leaf = activeLeaf;
  const asked = options.leaf ?? options.branch;
  if (asked !== undefined) {
    if (!Number.isSafeInteger(asked) || asked < 0 || asked >= nextSeq) {
      throw new TurnSequenceError({ chatId: steps.chatId, expectedSeq: nextSeq, actualSeq: asked });
    }
    leaf = options.leaf ?? newestLeaf(tree, asked);
  }
  const path = pathRanges(tree, leaf);
  const keptFrom =
    options.kept === false
      ? nextSeq
      : Math.min(branchFoldOf(transcript, tree, leaf)?.firstKeptSeq ?? 0, Math.max(leaf, 0));
  const keptRanges = options.kept === false ? [] : rangesFrom(path, keptFrom);
  const paged = page ? pageOfRanges(path, Math.min(page.before ?? nextSeq, nextSeq), page.limit) : null;
  const wanted = unionOf([...keptRanges, ...(paged?.ranges ?? [])]);
  const read = new Map<number, ChatMessage>();
  for (const message of tail) read.set(message.seq, message);
  for (const range of wanted) {
    const to = Math.min(range.to, through);
    if (range.from >= to) continue;
    for (const message of await steps.range(range.from, to)) read.set(message.seq, message);
  }
  const messagesOf = (ranges: readonly SeqRange[]): ChatMessage[] => {
    const messages: ChatMessage[] = [];
    for (const range of ranges)
      for (let seq = range.from; seq < range.to; seq++) {
        const message = read.get(seq);
        if (message) messages.push(message);
      }
    return messages;
  };
  const pageMessages = paged ? messagesOf(paged.ranges) : [];
  return {
    nextSeq,
    transcript,
    tree,
    leaf,
    keptFrom,
    kept: messagesOf(keptRanges),
    page: pageMessages,
    hasOlder: pageMessages.length > 0 && (paged?.hasOlder ?? false),
  };
}
