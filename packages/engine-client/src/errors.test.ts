import { describe, expect, it } from "vitest";
import {
  assertSafeChatId,
  ChatBusyError,
  EngineClientError,
  InvalidChatIdError,
  isAbortError,
  TurnSequenceError,
} from "./errors.js";

describe("error classes", () => {
  it.each([
    ["InvalidChatIdError", new InvalidChatIdError("../x", "why"), InvalidChatIdError],
    ["TurnSequenceError", new TurnSequenceError({ chatId: "c", expectedSeq: 2, actualSeq: 5 }), TurnSequenceError],
    ["ChatBusyError", new ChatBusyError("c"), ChatBusyError],
  ] as const)(
    "given a %s, should be recognised by its own isInstance and the base one, by marker",
    (name, error, Class) => {
      expect(error.name).toBe(name);
      expect(Class.isInstance(error)).toBe(true);
      expect(EngineClientError.isInstance(error)).toBe(true);
      // A look-alike with the same name and message is not one.
      const lookAlike = Object.assign(new Error(error.message), { name });
      expect(Class.isInstance(lookAlike)).toBe(false);
      expect(EngineClientError.isInstance(lookAlike)).toBe(false);
    },
  );

  it("should not confuse one error class with another", () => {
    expect(ChatBusyError.isInstance(new InvalidChatIdError("a/b", "why"))).toBe(false);
    expect(InvalidChatIdError.isInstance(new ChatBusyError("c"))).toBe(false);
  });
});

describe("assertSafeChatId", () => {
  it.each(["chat-1", "2026-11-29_a.b", "A~z", "x".repeat(200)])("given %j, should accept it", (id) => {
    expect(() => assertSafeChatId(id)).not.toThrow();
  });
  it.each(["", "..", ".", "../etc", "a/b", "a\\b", "a\0b", "x".repeat(201), "with space", "ü"])(
    "given %j, should refuse it with an InvalidChatIdError",
    (id) => {
      expect(() => assertSafeChatId(id)).toThrow(InvalidChatIdError);
    },
  );
});

describe("isAbortError", () => {
  it("should recognise aborts by name, not by message", () => {
    expect(isAbortError(new DOMException("x", "AbortError"))).toBe(true);
    expect(isAbortError(AbortSignal.abort().reason)).toBe(true);
    expect(isAbortError(new Error("AbortError"))).toBe(false);
  });
});
