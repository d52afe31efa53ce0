import type { ChatMessage } from "../messages.js";
import type { ChatReading, ReadChatOptions } from "./chat-store.js";
import { keptStart, type TranscriptFile } from "./transcript-file.js";

/** What a store reads a chat with (inside its queue for the chat): {@link readChatWith} decides what to read. */
export interface ChatReadSteps {
  /** The log's length and the transcript (null when none), checked with `check` (given that length) as `readTranscript` checks. */
  head(check: ReadChatOptions["check"]): Promise<{
    readonly nextSeq: number;
    readonly transcript: TranscriptFile | null;
  }>;
  /** The log's messages with seqs from `from` to `to` (excluded), `to` at most the log's length, checked as `readLog` checks. */
  range(from: number, to: number): Promise<ChatMessage[]>;
}

/**
 * `ChatStore.readChat` on a store's two steps: the state first, then the kept part and the page, read as one
 * range when they touch (the newest page always does), else as two. The one rule of what a chat read holds.
 */
export async function readChatWith(steps: ChatReadSteps, options: ReadChatOptions = {}): Promise<ChatReading> {
  const { check, page } = options;
  const { nextSeq, transcript } = await steps.head(check);
  const keptFrom = options.kept === false ? nextSeq : keptStart(transcript, nextSeq);
  if (page === undefined) {
    const kept = keptFrom < nextSeq ? await steps.range(keptFrom, nextSeq) : [];
    return { nextSeq, transcript, keptFrom, kept, page: [], hasOlder: false };
  }
  const pageTo = Math.max(0, Math.min(page.before ?? nextSeq, nextSeq));
  const pageFrom = Math.max(0, pageTo - page.limit);
  let kept: ChatMessage[] = [];
  let pageMessages: ChatMessage[] = [];
  if (keptFrom < nextSeq && pageTo >= keptFrom) {
    // One range from the earlier start to the end: the page is a part of it.
    const from = Math.min(pageFrom, keptFrom);
    const read = await steps.range(from, nextSeq);
    kept = read.slice(keptFrom - from);
    pageMessages = read.slice(pageFrom - from, pageTo - from);
  } else {
    if (keptFrom < nextSeq) kept = await steps.range(keptFrom, nextSeq);
    if (pageFrom < pageTo) pageMessages = await steps.range(pageFrom, pageTo);
  }
  return { nextSeq, transcript, keptFrom, kept, page: pageMessages, hasOlder: pageMessages.length > 0 && pageFrom > 0 };
}
