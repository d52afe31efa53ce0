import type { ChatMessage } from "../messages.js";
import type { TranscriptFile } from "./transcript-file.js";

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
  /** Every message of the chat's log in `seq` order (0, 1, 2, ...); empty for a chat never written. */
  readLog(chatId: string): Promise<ChatMessage[]>;
  /**
   * Adds messages to the end of the log, all or (for the file store, after a crash) a prefix of them. The first
   * must carry the next `seq` and the rest follow one by one, else `TurnSequenceError`; a message of the wrong
   * shape is an `InvalidChatRecordError`. Resolves once they are stored (on disk, for the file and
   * IndexedDB stores).
   */
  appendLog(chatId: string, messages: readonly ChatMessage[]): Promise<void>;
  /**
   * The chat's transcript, or null when there is none. A file that does not pass `options.check` is corrupt
   * like an unreadable one: moved aside, and a `TranscriptCorruptError` naming the check's reason.
   */
  readTranscript(chatId: string, options?: ReadTranscriptOptions): Promise<TranscriptFile | null>;
  /**
   * Replaces the chat's transcript whole: a reader sees the old one or the new one, never a mix, even after a
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
}
