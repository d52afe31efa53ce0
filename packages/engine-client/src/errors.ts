/**
 * Errors carry a marker symbol shared through the global symbol registry, so `isInstance` works across
 * bundles and copies of this package, where `instanceof` would not. Never match on `message`.
 */
const marker = "conch.engine-client.error";
const baseSymbol = Symbol.for(marker);

export class EngineClientError extends Error {
  readonly [baseSymbol] = true;
  override readonly cause?: unknown;

  constructor({ name, message, cause }: { name: string; message: string; cause?: unknown }) {
    super(message);
    this.name = name;
    this.cause = cause;
  }

  static isInstance(error: unknown): error is EngineClientError {
    return hasMarker(error, baseSymbol);
  }
}

/** Whether a value carries a marker symbol (set to `true` by the class that owns it). */
export function hasMarker(error: unknown, marker: symbol): boolean {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
}

/** The marker symbol of an error class, by its stable name (shared across bundles through `Symbol.for`). */
export function markerFor(name: string): symbol {
  return Symbol.for(`${marker}.${name}`);
}

const invalidChatIdSymbol = markerFor("InvalidChatIdError");
/** A chat id that could escape its folder or is not a usable key. */
export class InvalidChatIdError extends EngineClientError {
  readonly [invalidChatIdSymbol] = true;
  readonly chatId: string;
  constructor(chatId: string, reason: string) {
    super({ name: "InvalidChatIdError", message: `Chat id ${JSON.stringify(chatId)} is refused: ${reason}` });
    this.chatId = chatId;
  }
  static override isInstance(error: unknown): error is InvalidChatIdError {
    return EngineClientError.isInstance(error) && hasMarker(error, invalidChatIdSymbol);
  }
}

const sequenceSymbol = markerFor("TurnSequenceError");
/** A turn whose `seq` does not follow the chat's log. */
export class TurnSequenceError extends EngineClientError {
  readonly [sequenceSymbol] = true;
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
    return EngineClientError.isInstance(error) && hasMarker(error, sequenceSymbol);
  }
}

const busySymbol = markerFor("ChatBusyError");
/** A second turn sent to a chat while one is still running. */
export class ChatBusyError extends EngineClientError {
  readonly [busySymbol] = true;
  readonly chatId: string;
  constructor(chatId: string) {
    super({ name: "ChatBusyError", message: `Chat ${chatId} is still answering the previous turn` });
    this.chatId = chatId;
  }
  static override isInstance(error: unknown): error is ChatBusyError {
    return EngineClientError.isInstance(error) && hasMarker(error, busySymbol);
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
