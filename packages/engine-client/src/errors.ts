/**
 * Every error class of this package, in one style, and the one place a failure that a turn survives is written
 * to the console (`defaultErrorHandler`).
 *
 * The base constructor marks each error with two symbols from the global registry: the package's and its class's
 * (by its stable `name`). `isInstance` reads them, so it works across bundles, realms and copies of this
 * package, where `instanceof` would not. Never match on `message`.
 */
import type { TurnProblem } from "./problems.js";
import type { WireProblem } from "./protocol/wire.js";
import type { TooLongRefusal } from "./providers/recognise-too-long.js";
import type { ProblemAnswer } from "./server/problems.js";

const registryPrefix = "conch.engine-client.error";
const baseMarker = Symbol.for(registryPrefix);

/** The marker of an error class, by its stable name (shared across bundles through `Symbol.for`). */
function classMarker(name: string): symbol {
  return Symbol.for(`${registryPrefix}.${name}`);
}

function hasMarker(error: unknown, marker: symbol): boolean {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
}

export class EngineClientError extends Error {
  override readonly cause?: unknown;

  constructor({ name, message, cause }: { name: string; message: string; cause?: unknown }) {
    super(message);
    this.name = name;
    this.cause = cause;
    Object.defineProperty(this, baseMarker, { value: true });
    Object.defineProperty(this, classMarker(name), { value: true });
  }

  static isInstance(error: unknown): error is EngineClientError {
    return hasMarker(error, baseMarker);
  }

  /** A subclass's `isInstance`: whether `error` was made by the class of this stable name, in any copy. */
  protected static isNamed(error: unknown, name: string): boolean {
    return hasMarker(error, baseMarker) && hasMarker(error, classMarker(name));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Failures a turn survives.

/**
 * Told of a failure that the turn (or the server) survives: a save that did not happen (the log still has every
 * message), a learner that failed (the words are still in the log), a listener that threw (the others and the
 * turn went on), a fold ahead of the need that failed (nothing changed), an unexpected error behind a server's 500. `during` says which; `chatId` whose, when known.
 */
export type ErrorHandler = (
  error: unknown,
  context: {
    readonly during: "listener" | "save" | "learner" | "context-usage" | "request" | "turn" | "fold-ahead";
    readonly chatId?: string;
  },
) => void;

/** The default {@link ErrorHandler}: `console.error`, where a developer sees it. */
export const defaultErrorHandler: ErrorHandler = (error, context) => {
  console.error(`conch (${context.during}${context.chatId !== undefined ? `, chat ${context.chatId}` : ""}):`, error);
};

// ---------------------------------------------------------------------------------------------------------------
// The engine contract.

/** A chat id that could escape its folder or is not a usable key. */
export class InvalidChatIdError extends EngineClientError {
  readonly chatId: string;
  constructor(chatId: string, reason: string) {
    super({ name: "InvalidChatIdError", message: `Chat id ${JSON.stringify(chatId)} is refused: ${reason}` });
    this.chatId = chatId;
  }
  static override isInstance(error: unknown): error is InvalidChatIdError {
    return EngineClientError.isNamed(error, "InvalidChatIdError");
  }
}

/** A turn whose `seq` does not follow the chat's log. */
export class TurnSequenceError extends EngineClientError {
  readonly chatId: string;
  readonly expectedSeq: number;
  readonly actualSeq: number;
  constructor({ chatId, expectedSeq, actualSeq }: { chatId: string; expectedSeq: number; actualSeq: number }) {
    super({
      name: "TurnSequenceError",
      message: `Chat ${chatId}: the next message goes at seq ${expectedSeq}, not ${actualSeq}`,
    });
    this.chatId = chatId;
    this.expectedSeq = expectedSeq;
    this.actualSeq = actualSeq;
  }
  static override isInstance(error: unknown): error is TurnSequenceError {
    return EngineClientError.isNamed(error, "TurnSequenceError");
  }
}

/** A second turn sent to a chat while one is still running. */
export class ChatBusyError extends EngineClientError {
  readonly chatId: string;
  constructor(chatId: string) {
    super({ name: "ChatBusyError", message: `Chat ${chatId} is still answering the previous turn` });
    this.chatId = chatId;
  }
  static override isInstance(error: unknown): error is ChatBusyError {
    return EngineClientError.isNamed(error, "ChatBusyError");
  }
}

/**
 * An edit, a regenerate of an answered message or a move between versions asked of an engine whose log is not a
 * tree (it does not declare the `branches` capability).
 */
export class BranchCapabilityMissingError extends EngineClientError {
  readonly engineId: string;
  constructor(engineId: string) {
    super({
      name: "BranchCapabilityMissingError",
      message: `The engine ${engineId} does not declare the branches capability`,
    });
    this.engineId = engineId;
  }
  static override isInstance(error: unknown): error is BranchCapabilityMissingError {
    return EngineClientError.isNamed(error, "BranchCapabilityMissingError");
  }
}

/** A fold asked of an engine that keeps no transcript (it does not declare the `context` capability). */
export class ContextCapabilityMissingError extends EngineClientError {
  readonly engineId: string;
  constructor(engineId: string) {
    super({
      name: "ContextCapabilityMissingError",
      message: `The engine ${engineId} does not declare the context capability`,
    });
    this.engineId = engineId;
  }
  static override isInstance(error: unknown): error is ContextCapabilityMissingError {
    return EngineClientError.isNamed(error, "ContextCapabilityMissingError");
  }
}

/** The failure `createMemoryLearner().failNext()` asks for: what a host's learner that throws looks like. */
export class LearnerFailedError extends EngineClientError {
  readonly chatId: string;
  constructor(chatId: string) {
    super({
      name: "LearnerFailedError",
      message: `The learner failed to review chat ${chatId} (asked for by failNext)`,
    });
    this.chatId = chatId;
  }
  static override isInstance(error: unknown): error is LearnerFailedError {
    return EngineClientError.isNamed(error, "LearnerFailedError");
  }
}

/** Whether an error is an abort (DOMException `AbortError`, or anything named so). */
export function isAbortError(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    ((error as { name?: unknown }).name === "AbortError" || (error as { name?: unknown }).name === "TimeoutError")
  );
}

/** Checks a chat id before it becomes part of a file name or key: no path separators, dots-only names or NUL. */
export function assertSafeChatId(chatId: string): void {
  if (typeof chatId !== "string" || chatId.length === 0) throw new InvalidChatIdError(String(chatId), "it is empty");
  if (chatId.length > 200) throw new InvalidChatIdError(chatId, "it is longer than 200 characters");
  if (!/^[A-Za-z0-9._~-]+$/.test(chatId)) {
    throw new InvalidChatIdError(chatId, "only letters, digits, '.', '_', '~' and '-' are allowed");
  }
  if (/^\.+$/.test(chatId)) throw new InvalidChatIdError(chatId, "it names a folder");
}

// ---------------------------------------------------------------------------------------------------------------
// The chat stores.

/**
 * A stored transcript that is not JSON, not valid UTF-8, or not a version-1 transcript of this chat.
 * The store has moved the bytes aside (`keptAt`) before throwing, so the next read finds no transcript and the
 * engine rebuilds it from the log; only the summary is lost, and its text is still in the kept copy.
 */
export class TranscriptCorruptError extends EngineClientError {
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
    return EngineClientError.isNamed(error, "TranscriptCorruptError");
  }
}

/** The transcript file parses, but a field the engine keeps in it is not valid: the file is treated as corrupt. */
export class TranscriptFieldsInvalidError extends EngineClientError {
  readonly chatId: string;
  /** Which field, and what is wrong with it. */
  readonly reason: string;
  constructor(chatId: string, reason: string) {
    super({
      name: "TranscriptFieldsInvalidError",
      message: `The transcript of chat ${chatId} is not usable: ${reason}`,
    });
    this.chatId = chatId;
    this.reason = reason;
  }
  static override isInstance(error: unknown): error is TranscriptFieldsInvalidError {
    return EngineClientError.isNamed(error, "TranscriptFieldsInvalidError");
  }
}

/** The reason of a log whose only fault is its last line cut short. */
export const tornReason = "the last line was cut short";

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
    return EngineClientError.isNamed(error, "ChatLogCorruptError");
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

/**
 * The storage itself failed to read a chat's record (permission denied, an I/O error, a folder where a file
 * should be, IndexedDB refusing). The record is left untouched; the error may pass, so nothing is moved aside.
 */
export class ChatStoreReadError extends EngineClientError {
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
    return EngineClientError.isNamed(error, "ChatStoreReadError");
  }
}

/**
 * The storage itself failed to write a chat's record (storage or disk full, no permission, the database closed
 * or upgraded by another tab, IndexedDB refusing). Nothing of the write was kept (a write is all or nothing); what was stored before
 * is untouched. It may pass: a later write can succeed.
 */
export class ChatStoreWriteError extends EngineClientError {
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
    return EngineClientError.isNamed(error, "ChatStoreWriteError");
  }
}

/**
 * A transcript, log message or title handed to a store that the store would not be able to read back. Nothing was
 * written: a store never writes what its own reader would call corrupt.
 */
export class InvalidChatRecordError extends EngineClientError {
  readonly chatId: string;
  readonly record: "transcript" | "log message" | "title";
  readonly reason: string;

  constructor(options: {
    chatId: string;
    record: "transcript" | "log message" | "title";
    reason: string;
    cause?: unknown;
  }) {
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
    return EngineClientError.isNamed(error, "InvalidChatRecordError");
  }
}

/**
 * Another process holds this file-store folder: two processes appending one log would write one seq twice.
 * Nothing was read or written. The lock file names the holder; a lock whose process has died is taken over
 * by itself, so this error means the holder is alive (or on another computer, where it cannot be checked).
 */
export class ChatStoreLockedError extends EngineClientError {
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
    return EngineClientError.isNamed(error, "ChatStoreLockedError");
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Providers.

/** What a failed provider call carries. */
export interface ProviderCallErrorOptions {
  readonly provider: string;
  readonly model?: string;
  readonly problem: TurnProblem;
  readonly tooLong?: TooLongRefusal | null;
  readonly status?: number;
  readonly responseBody?: string;
  readonly afterOutput?: boolean;
  readonly cause?: unknown;
}

/**
 * A provider call that failed: every non-OK response, malformed body, broken stream, network failure or
 * timeout maps to this one type. Aborts are never wrapped: they pass through as the AbortError.
 *
 * For a "too long" refusal, `problem.kind` is `too-long` and `tooLong` says what the refusal named. The
 * problem's `next` step is then a placeholder (`new-chat` with an empty message): only the engine knows
 * the ready models and the person's message, so it replaces `next` before showing the problem.
 */
export class ProviderCallError extends EngineClientError {
  /** The row id (`openai`, `anthropic`, ...). */
  readonly provider: string;
  /** The model of the call, when it was a chat call. */
  readonly model?: string;
  /** The problem to show, by kind. */
  readonly problem: TurnProblem;
  /** The "too long" refusal, or `null` when the failure is something else. */
  readonly tooLong: TooLongRefusal | null;
  /** The HTTP status, when a response came. */
  readonly statusCode?: number;
  /** The response body as received (truncated to 64 KB), when there was one. */
  readonly responseBody?: string;
  /**
   * Whether any of the answer (text, thinking or a tool call) had already been streamed. A quiet retry is
   * only allowed when it had not.
   */
  readonly afterOutput: boolean;

  constructor(options: ProviderCallErrorOptions) {
    super({
      name: "ProviderCallError",
      message: `${options.provider}: ${options.problem.title}${
        options.problem.providerMessage ? `: ${options.problem.providerMessage}` : ""
      }`,
      cause: options.cause,
    });
    this.provider = options.provider;
    if (options.model !== undefined) this.model = options.model;
    this.problem = options.problem;
    this.tooLong = options.tooLong ?? null;
    if (options.status !== undefined) this.statusCode = options.status;
    if (options.responseBody !== undefined) this.responseBody = options.responseBody;
    this.afterOutput = options.afterOutput ?? false;
  }

  /** The HTTP status (an alias of `statusCode`, named as the TurnProblem names it). */
  get status(): number | undefined {
    return this.statusCode;
  }

  /** Whether the same request may succeed if sent again later (network, rate limit, server trouble). */
  get isRetryable(): boolean {
    const problem = this.problem;
    switch (problem.kind) {
      case "offline":
      case "rate-limited":
        return true;
      case "provider-error": {
        // A client error (4xx) will fail the same way again; a server error or a broken stream may not.
        const status = this.statusCode;
        return status === undefined || status < 400 || status === 408 || status === 409 || status >= 500;
      }
      case "too-long":
      case "auth":
      case "quota":
      case "model-unavailable":
      case "refused":
        return false;
      default:
        return problem satisfies never;
    }
  }

  /** A copy that records that output had already been streamed. */
  withAfterOutput(afterOutput: boolean): ProviderCallError {
    if (afterOutput === this.afterOutput) return this;
    return new ProviderCallError({
      provider: this.provider,
      ...(this.model !== undefined && { model: this.model }),
      problem: this.problem,
      tooLong: this.tooLong,
      ...(this.statusCode !== undefined && { status: this.statusCode }),
      ...(this.responseBody !== undefined && { responseBody: this.responseBody }),
      afterOutput,
      cause: this.cause,
    });
  }

  /** Whether `error` is a ProviderCallError from any copy of this package. */
  static override isInstance(error: unknown): error is ProviderCallError {
    return EngineClientError.isNamed(error, "ProviderCallError");
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The server and the remote engine.

/** Thrown inside the server's handler to answer with a problem at once. */
export class ProblemResponse extends EngineClientError {
  readonly answer: ProblemAnswer;
  constructor(answer: ProblemAnswer) {
    super({ name: "ProblemResponse", message: answer.problem.title });
    this.answer = answer;
  }
  static override isInstance(error: unknown): error is ProblemResponse {
    return EngineClientError.isNamed(error, "ProblemResponse");
  }
}

/**
 * An event recorded under a chat's lease that is no longer held: released (the turn is over), or lost (it
 * expired and another instance took it). Nothing was recorded.
 */
export class ChatLeaseEndedError extends EngineClientError {
  readonly chatId: string;
  readonly ended: "released" | "lost";
  constructor(chatId: string, ended: "released" | "lost") {
    super({
      name: "ChatLeaseEndedError",
      message:
        ended === "released"
          ? `The lease of chat ${chatId} was released; nothing more is recorded under it`
          : `The lease of chat ${chatId} was lost before this event could be stored: it expired and another instance took it`,
    });
    this.chatId = chatId;
    this.ended = ended;
  }
  static override isInstance(error: unknown): error is ChatLeaseEndedError {
    return EngineClientError.isNamed(error, "ChatLeaseEndedError");
  }
}

/** An engine whose turn stream ended before its first event (a turn always opens with `turn-start`). */
export class EmptyTurnStreamError extends EngineClientError {
  readonly chatId: string;
  readonly seq: number;
  constructor(chatId: string, seq: number) {
    super({
      name: "EmptyTurnStreamError",
      message: `The engine's turn of chat ${chatId} at seq ${seq} ended without an event`,
    });
    this.chatId = chatId;
    this.seq = seq;
  }
  static override isInstance(error: unknown): error is EmptyTurnStreamError {
    return EngineClientError.isNamed(error, "EmptyTurnStreamError");
  }
}

/** The server refused a request (its `application/problem+json`), or answered what the protocol does not say. */
export class RemoteEngineError extends EngineClientError {
  /** The HTTP status (0 when the answer was not HTTP's: a stream that broke for good). */
  readonly status: number;
  /** The server's problem, when it sent one. */
  readonly problem: WireProblem | null;
  constructor({ status, problem, message }: { status: number; problem: WireProblem | null; message?: string }) {
    super({
      name: "RemoteEngineError",
      message:
        message ?? (problem ? `${problem.title}${problem.detail ? `: ${problem.detail}` : ""}` : `HTTP ${status}`),
    });
    this.status = status;
    this.problem = problem;
  }
  static override isInstance(error: unknown): error is RemoteEngineError {
    return EngineClientError.isNamed(error, "RemoteEngineError");
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Postgres.

/** The database was migrated by a newer version of this package; this one refuses to touch it. */
export class SchemaTooNewError extends EngineClientError {
  readonly found: number;
  readonly supported: number;
  constructor(found: number, supported: number) {
    super({
      name: "SchemaTooNewError",
      message:
        `The database's chat schema is at version ${found}, newer than the ${supported} this version of ` +
        "@conch/engine-client knows; nothing was changed. Run the newer version, or restore a backup from before it.",
    });
    this.found = found;
    this.supported = supported;
  }
  static override isInstance(error: unknown): error is SchemaTooNewError {
    return EngineClientError.isNamed(error, "SchemaTooNewError");
  }
}

/** The database has no chat schema, or an older one: `migrate(db)` has not run on it. */
export class SchemaNotMigratedError extends EngineClientError {
  readonly found: number;
  /** The version this code reads and writes. */
  readonly supported: number;
  constructor(found: number, supported: number, cause?: unknown) {
    super({
      name: "SchemaNotMigratedError",
      message: `The database's chat schema is at version ${found}, not ${supported}: run migrate(db) before opening a store on it`,
      cause,
    });
    this.found = found;
    this.supported = supported;
  }
  static override isInstance(error: unknown): error is SchemaNotMigratedError {
    return EngineClientError.isNamed(error, "SchemaNotMigratedError");
  }
}

/**
 * A chat being imported is in the database already, with fewer messages than its file: it was written to both.
 * Nothing of it was changed; the chats imported before it stay imported.
 */
export class ChatImportConflictError extends EngineClientError {
  readonly chatId: string;
  /** The chat's log file. */
  readonly logPath: string;
  readonly databaseMessages: number;
  readonly fileMessages: number;
  constructor(options: { chatId: string; logPath: string; databaseMessages: number; fileMessages: number }) {
    super({
      name: "ChatImportConflictError",
      message:
        `Chat ${options.chatId} is in the database with ${options.databaseMessages} messages and in ` +
        `${options.logPath} with ${options.fileMessages}: it was written to both; nothing was changed.`,
    });
    this.chatId = options.chatId;
    this.logPath = options.logPath;
    this.databaseMessages = options.databaseMessages;
    this.fileMessages = options.fileMessages;
  }
  static override isInstance(error: unknown): error is ChatImportConflictError {
    return EngineClientError.isNamed(error, "ChatImportConflictError");
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The AI SDK adapter.

/** What `useChat` asked for that would cut or rewrite the engine's append-only log. */
export type NacreChatRefusalReason = "edit" | "regenerate" | "nothing-to-send" | "no-compact";

const refusalMessages: Readonly<Record<NacreChatRefusalReason, string>> = {
  edit: "A sent message cannot be edited on this engine: it keeps no versions (no `branches`), and its log only grows. Send a new message instead.",
  regenerate:
    "Only an unanswered message can be answered again on this engine (it keeps no versions: no `branches`), or a person's message of the chat's active branch on one that does. Send a new message instead.",
  "nothing-to-send": "The last message is neither a new message of the person nor tool results to send.",
  "no-compact": "This engine keeps no transcript of its own, so /compact has nothing to summarise.",
};

/**
 * `useChat` asked for something that would lose a message: edit a sent message or regenerate a kept answer on
 * an engine without `branches` (its log cannot keep the old version beside the new), or send nothing. The log
 * is untouched; a reload shows it as it is.
 */
export class NacreChatRefusedError extends EngineClientError {
  readonly reason: NacreChatRefusalReason;
  constructor(reason: NacreChatRefusalReason) {
    super({ name: "NacreChatRefusedError", message: refusalMessages[reason] });
    this.reason = reason;
  }
  static override isInstance(error: unknown): error is NacreChatRefusedError {
    return EngineClientError.isNamed(error, "NacreChatRefusedError");
  }
}
