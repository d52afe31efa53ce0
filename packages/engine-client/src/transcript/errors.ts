import { EngineClientError, hasMarker, markerFor } from "../errors.js";

/**
 * Errors of the chat stores. They follow `../errors.ts`: a marker symbol from the global registry per class,
 * so `isInstance` works across bundles where `instanceof` would not. Never match on `message`.
 */

const transcriptCorruptSymbol = markerFor("TranscriptCorruptError");
/**
 * A stored transcript that is not JSON, not valid UTF-8, or not a version-1 transcript of this chat.
 * The store has moved the bytes aside (`keptAt`) before throwing, so the next read finds no transcript and the
 * engine rebuilds it from the log; only the summary is lost, and its text is still in the kept copy.
 */
export class TranscriptCorruptError extends EngineClientError {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: isInstance reads it through the registry symbol.
  private readonly [transcriptCorruptSymbol] = true;
  readonly chatId: string;
  /** Where the transcript was read: a file path, or `indexeddb://<database>/transcripts/<chatId>`. */
  readonly location: string;
  /** Where the unreadable bytes are kept now; equals `location` when they could not be moved. */
  readonly keptAt: string;
  /** What is wrong with it, in words. */
  readonly reason: string;

  constructor(options: { chatId: string; location: string; keptAt: string; reason: string; cause?: unknown }) {
    const kept =
      options.keptAt === options.location
        ? "it could not be moved aside and was left where it is"
        : `it was kept at ${options.keptAt}`;
    super({
      name: "TranscriptCorruptError",
      message: `The transcript of chat ${options.chatId} at ${options.location} cannot be read (${options.reason}); ${kept}`,
      cause: options.cause,
    });
    this.chatId = options.chatId;
    this.location = options.location;
    this.keptAt = options.keptAt;
    this.reason = options.reason;
  }

  static override isInstance(error: unknown): error is TranscriptCorruptError {
    return EngineClientError.isInstance(error) && hasMarker(error, transcriptCorruptSymbol);
  }
}

/** The reason of a log whose only fault is its last line cut short. */
export const tornReason = "the last line was cut short";

const chatLogCorruptSymbol = markerFor("ChatLogCorruptError");
/**
 * A chat's log that cannot be read as it is.
 *
 * - `torn: true`: the last line was cut short, which is what a crash in the middle of an append leaves (that
 *   append never resolved). The store has kept the whole file aside (`keptAt`) and cut the log back to its
 *   complete lines (`repaired: true`), so the next `readLog` returns those `keptMessages` messages.
 * - A seq written twice (two writers at once): the file store keeps the whole file aside and writes the log
 *   again with the later line under the next seq, or without it when it is a byte-for-byte copy of the earlier
 *   line (`repaired: true`, `reason` says which lines); nothing of the person's is lost.
 * - Otherwise a complete line is not a message at its place (or is longer than the runtime's longest string).
 *   Nothing is changed (`repaired: false`): the log stays where it is and every read and append refuses it until
 *   a person decides what to do.
 */
export class ChatLogCorruptError extends EngineClientError {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: isInstance reads it through the registry symbol.
  private readonly [chatLogCorruptSymbol] = true;
  readonly chatId: string;
  /** Where the log was read: a file path, or `indexeddb://<database>/log/<chatId>`. */
  readonly location: string;
  /** Where the whole log as it was is kept now; equals `location` when it was left in place. */
  readonly keptAt: string;
  /** The 1-based line (for IndexedDB: 1-based record) that is wrong. */
  readonly line: number;
  /** Whether only the last line was cut short (a crash mid-append). */
  readonly torn: boolean;
  /** Whether the store cut the log back to its complete messages, so reading it again succeeds. */
  readonly repaired: boolean;
  /** How many complete messages come before the wrong line. */
  readonly keptMessages: number;
  readonly reason: string;

  constructor(options: {
    chatId: string;
    location: string;
    keptAt: string;
    line: number;
    torn: boolean;
    repaired: boolean;
    keptMessages: number;
    reason: string;
    cause?: unknown;
  }) {
    const what = !options.repaired
      ? `cannot be read at line ${options.line} (${options.reason})`
      : options.torn && options.reason === tornReason
        ? `ends in a line cut short at line ${options.line} (an append that never finished)`
        : `was repaired from line ${options.line} on (${options.reason})`;
    const done = !options.repaired
      ? "nothing was changed and the log was left where it is"
      : options.torn && options.reason === tornReason
        ? `the whole file was kept at ${options.keptAt} and the log now holds the ${options.keptMessages} complete messages before it`
        : `the whole file was kept at ${options.keptAt} and the log now holds ${options.keptMessages} messages`;
    super({
      name: "ChatLogCorruptError",
      message: `The log of chat ${options.chatId} at ${options.location} ${what}; ${done}`,
      cause: options.cause,
    });
    this.chatId = options.chatId;
    this.location = options.location;
    this.keptAt = options.keptAt;
    this.line = options.line;
    this.torn = options.torn;
    this.repaired = options.repaired;
    this.keptMessages = options.keptMessages;
    this.reason = options.reason;
  }

  static override isInstance(error: unknown): error is ChatLogCorruptError {
    return EngineClientError.isInstance(error) && hasMarker(error, chatLogCorruptSymbol);
  }
}

/**
 * A complete log line (for IndexedDB: record) that is not the message at its place: nothing is changed, and the
 * `line - 1` messages before it are complete.
 */
export function unreadableLogLine(options: {
  chatId: string;
  location: string;
  line: number;
  reason: string;
  cause?: unknown;
}): ChatLogCorruptError {
  return new ChatLogCorruptError({
    ...options,
    keptAt: options.location,
    torn: false,
    repaired: false,
    keptMessages: options.line - 1,
  });
}

const readSymbol = markerFor("ChatStoreReadError");
/**
 * The storage itself failed to read a chat's record (permission denied, an I/O error, a folder where a file
 * should be, IndexedDB refusing). The record is left untouched; the error may pass, so nothing is moved aside.
 */
export class ChatStoreReadError extends EngineClientError {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: isInstance reads it through the registry symbol.
  private readonly [readSymbol] = true;
  readonly chatId: string;
  readonly location: string;

  constructor(options: { chatId: string; location: string; cause: unknown }) {
    const detail = options.cause instanceof Error ? `: ${options.cause.message}` : "";
    super({
      name: "ChatStoreReadError",
      message: `Chat ${options.chatId}: ${options.location} could not be read${detail}`,
      cause: options.cause,
    });
    this.chatId = options.chatId;
    this.location = options.location;
  }

  static override isInstance(error: unknown): error is ChatStoreReadError {
    return EngineClientError.isInstance(error) && hasMarker(error, readSymbol);
  }
}

const writeSymbol = markerFor("ChatStoreWriteError");
/**
 * The storage itself failed to write a chat's record (storage or disk full, no permission, the database closed
 * or upgraded by another tab, IndexedDB refusing). Nothing of the write was kept (a write is all or nothing); what was stored before
 * is untouched. It may pass: a later write can succeed.
 */
export class ChatStoreWriteError extends EngineClientError {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: isInstance reads it through the registry symbol.
  private readonly [writeSymbol] = true;
  readonly chatId: string;
  readonly location: string;
  /** The storage is full (`QuotaExceededError`, `ENOSPC`, `EDQUOT`): free space, or delete old chats. */
  readonly quotaExceeded: boolean;

  constructor(options: { chatId: string; location: string; cause: unknown }) {
    const detail = options.cause instanceof Error ? `: ${options.cause.message}` : "";
    super({
      name: "ChatStoreWriteError",
      message: `Chat ${options.chatId}: ${options.location} could not be written, nothing of this write was kept${detail}`,
      cause: options.cause,
    });
    this.chatId = options.chatId;
    this.location = options.location;
    const code = (options.cause as { code?: unknown } | null)?.code;
    this.quotaExceeded =
      (options.cause instanceof Error && options.cause.name === "QuotaExceededError") ||
      code === "ENOSPC" ||
      code === "EDQUOT";
  }

  static override isInstance(error: unknown): error is ChatStoreWriteError {
    return EngineClientError.isInstance(error) && hasMarker(error, writeSymbol);
  }
}

const invalidRecordSymbol = markerFor("InvalidChatRecordError");
/**
 * A transcript or log message handed to a store that the store would not be able to read back. Nothing was
 * written: a store never writes what its own reader would call corrupt.
 */
export class InvalidChatRecordError extends EngineClientError {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: isInstance reads it through the registry symbol.
  private readonly [invalidRecordSymbol] = true;
  readonly chatId: string;
  readonly record: "transcript" | "log message";
  readonly reason: string;

  constructor(options: { chatId: string; record: "transcript" | "log message"; reason: string; cause?: unknown }) {
    super({
      name: "InvalidChatRecordError",
      message: `Chat ${options.chatId}: this ${options.record} is refused, nothing was written (${options.reason})`,
      cause: options.cause,
    });
    this.chatId = options.chatId;
    this.record = options.record;
    this.reason = options.reason;
  }

  static override isInstance(error: unknown): error is InvalidChatRecordError {
    return EngineClientError.isInstance(error) && hasMarker(error, invalidRecordSymbol);
  }
}

const lockedSymbol = markerFor("ChatStoreLockedError");
/**
 * Another process holds this file-store folder: two processes appending one log would write one seq twice.
 * Nothing was read or written. The lock file names the holder; a lock whose process has died is taken over
 * by itself, so this error means the holder is alive (or on another computer, where it cannot be checked).
 */
export class ChatStoreLockedError extends EngineClientError {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: isInstance reads it through the registry symbol.
  private readonly [lockedSymbol] = true;
  /** The store's folder. */
  readonly root: string;
  /** The lock file: remove it only when sure its holder is gone. */
  readonly lockPath: string;
  /** The holder's process id, as its lock file says (null when the file could not be read). */
  readonly holderPid: number | null;
  /** The computer the holder runs on, as its lock file says. */
  readonly holderHost: string | null;

  constructor(options: {
    root: string;
    lockPath: string;
    holderPid: number | null;
    holderHost: string | null;
    cause?: unknown;
  }) {
    const holder =
      options.holderPid === null
        ? "another process"
        : `process ${options.holderPid}${options.holderHost ? ` on ${options.holderHost}` : ""}`;
    super({
      name: "ChatStoreLockedError",
      message: `The chat folder ${options.root} is in use by ${holder} (lock file ${options.lockPath}); one process at a time may use it. Stop that process, or remove the lock file if it is gone.`,
      cause: options.cause,
    });
    this.root = options.root;
    this.lockPath = options.lockPath;
    this.holderPid = options.holderPid;
    this.holderHost = options.holderHost;
  }

  static override isInstance(error: unknown): error is ChatStoreLockedError {
    return EngineClientError.isInstance(error) && hasMarker(error, lockedSymbol);
  }
}
