import type { ChatMessage } from "../messages.js";
import type { BranchTree } from "./branch-tree.js";
import type { ChatDirectory } from "./chat-directory.js";
import type { TranscriptFile } from "./transcript-file.js";

/** A page of the branch read: its newest `limit` messages before the seq `before`. */
export interface LogPageRequest {
  /** The page ends before this seq. Default: the branch's end (the newest page). */
  readonly before?: number;
  /** At most this many messages: a whole number from 1, or `Infinity` for every message before `before`. */
  readonly limit: number;
}

/** Options of {@link ChatStore.readChat}. */
export interface ReadChatOptions {
  /**
   * The reader's own check of the fields it keeps in the transcript, given the log's length (`nextSeq`): why
   * the file is not usable, or null when it is. A file that does not pass is corrupt, as in `readTranscript`.
   */
  readonly check?: (file: TranscriptFile, nextSeq: number) => string | null;
  /** A page of the log to read as well (what a person scrolls through). Default: none. */
  readonly page?: LogPageRequest;
  /** Whether to read the kept part. Default true; false reads only the state and the page. */
  readonly kept?: boolean;
  /**
   * Read the branch through this seq (its newest leaf) instead of the active one: its kept part (from its own
   * fold: its own, else the deepest fold whose folded prefix lies on its path, else none) and its page. An unknown seq is a `TurnSequenceError`. Default: the active branch.
   */
  readonly branch?: number;
  /**
   * Read the branch ending exactly at this seq, whatever follows it (a regenerated answer's parent, say): its path
   * and kept part as for `branch`. Wins over `branch`. An unknown seq is a `TurnSequenceError`.
   */
  readonly leaf?: number;
}

/**
 * A chat as a turn (and a page of the chat) needs it: never more of the log than the branch's kept part, the page
 * and the messages appended since the transcript was written. Every message list holds the branch read (the
 * active one unless `ReadChatOptions.branch`): its path from the root to `leaf`, in `seq` order; for a log that
 * never branched, the log itself.
 */
export interface ChatReading {
  /** The seq the next message takes: how many messages the log holds, every branch counted. */
  readonly nextSeq: number;
  /** The chat's transcript, or null when there is none. */
  readonly transcript: TranscriptFile | null;
  /** The log's tree, complete to `nextSeq` (the transcript's forks and those of the messages appended since). */
  readonly tree: BranchTree;
  /** The last message of the branch read; -1 for an empty log. */
  readonly leaf: number;
  /** Where `kept` starts: see {@link keptStart}; `nextSeq` when the kept part was not asked for. */
  readonly keptFrom: number;
  /**
   * The branch's messages from `keptFrom` to its leaf, in `seq` order: the messages the transcript keeps,
   * whatever came after them, and always the leaf. The whole branch when there is no transcript.
   */
  readonly kept: ChatMessage[];
  /** The page asked for, in `seq` order; empty without one. */
  readonly page: ChatMessage[];
  /** Whether the branch holds messages older than the page's first. */
  readonly hasOlder: boolean;
}

/** Options of {@link ChatStore.readTranscript}. */
export interface ReadTranscriptOptions {
  /**
   * The reader's own check of the fields it keeps in the file (the API engine's, against the chat's log):
   * why the file is not usable, or null when it is.
   */
  readonly check?: (file: TranscriptFile) => string | null;
}

/**
 * Where a chat's two records live: its log (every message ever, append-only, what the person sees) and the
 * engine's transcript (what is sent to the model). Implementations: {@link createMemoryChatStore},
 * {@link createIndexedDbChatStore} and, from `@conch/engine-client/node`, `createFileChatStore`.
 *
 * Every method refuses an unsafe chat id (`InvalidChatIdError`) before touching storage. Calls for one chat run
 * one after another in the order they were made, so concurrent writes never interleave. Nothing unreadable is
 * ever returned as an empty chat: it is a `TranscriptCorruptError`, a `ChatLogCorruptError` or a
 * `ChatStoreReadError`.
 */
export interface ChatStore {
  /**
   * Every message of the chat's log in `seq` order (0, 1, 2, ...); empty for a chat never written. It reads the
   * whole log: a turn reads with {@link ChatStore.readChat} instead, whose cost does not grow with the log.
   */
  readLog(chatId: string): Promise<ChatMessage[]>;
  /**
   * The chat as one read: its transcript (state), the log's kept part (from the transcript's first kept seq to
   * the end) and, when asked, a page of the log. It reads no more of the log than those two need, so a turn on a
   * long chat costs what its window costs. A transcript that does not pass `options.check` is corrupt as in
   * `readTranscript` (moved aside, `TranscriptCorruptError`); a log that cannot be read is an error as in
   * `readLog`.
   */
  readChat(chatId: string, options?: ReadChatOptions): Promise<ChatReading>;
  /**
   * Adds messages to the end of the log, all or (for the file store, after a crash) a prefix of them. The first
   * must carry the next `seq` and the rest follow one by one, else `TurnSequenceError`; a message of the wrong
   * shape (a `parent` not below its `seq`, say) is an `InvalidChatRecordError`. A message's `parent` is stored
   * with it; the log stays in seq order whatever branch a message is on. Resolves once they are stored (on disk, for the file and
   * IndexedDB stores).
   */
  appendLog(chatId: string, messages: readonly ChatMessage[]): Promise<void>;
  /**
   * The chat's transcript, or null when there is none. A file that does not pass `options.check` is corrupt
   * like an unreadable one: moved aside, and a `TranscriptCorruptError` naming the check's reason.
   */
  readTranscript(chatId: string, options?: ReadTranscriptOptions): Promise<TranscriptFile | null>;
  /**
   * Replaces the chat's transcript whole (with its `branches`: the forks, the active leaf, the other branches'
   * folds): a reader sees the old one or the new one, never a mix, even after a
   * crash. `file.id` must be `chatId`. Resolves once it is stored (on disk, for the file and IndexedDB stores).
   */
  writeTranscript(chatId: string, file: TranscriptFile): Promise<void>;
  /** The stored transcript's size in bytes (its UTF-8 JSON), 0 when there is none; the engine folds past 8 MB. */
  transcriptBytes(chatId: string): Promise<number>;
  /**
   * Optional, for a store with transactions (the Postgres one): appends a turn's messages and replaces the
   * transcript in one transaction, both or neither, with `appendLog`'s and `writeTranscript`'s checks. The API
   * engine then stores a turn's answer with its transcript (and the summary a fold of that turn wrote) this way;
   * without it, it appends the answer and writes the transcript as two calls.
   */
  writeTurn?(chatId: string, messages: readonly ChatMessage[], file: TranscriptFile): Promise<void>;
  /**
   * The person's chats in this store as a list, with titles they may rename, and removal: what a chat list and
   * `GET /chats` read. Every store of this package has one; optional, so a host's own store need not.
   */
  readonly directory?: ChatDirectory;
}
