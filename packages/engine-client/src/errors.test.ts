import { describe, expect, it, vi } from "vitest";
import * as errors from "./errors.js";
import {
  assertSafeChatId,
  BranchCapabilityMissingError,
  ChatBusyError,
  ChatImportConflictError,
  ChatLeaseEndedError,
  ChatLogCorruptError,
  ChatStoreLockedError,
  ChatStoreReadError,
  ChatStoreWriteError,
  ContextCapabilityMissingError,
  defaultErrorHandler,
  EmptyTurnStreamError,
  EngineClientError,
  InvalidChatIdError,
  InvalidChatRecordError,
  isAbortError,
  LearnerFailedError,
  NacreChatRefusedError,
  ProblemResponse,
  ProviderCallError,
  RemoteEngineError,
  SchemaNotMigratedError,
  SchemaTooNewError,
  TranscriptCorruptError,
  TranscriptFieldsInvalidError,
  TurnSequenceError,
  unreadableLogLine,
} from "./errors.js";
import { defaultProblemTitle } from "./problems.js";

/** One instance of every error class of the package, by its name. */
const examples = {
  InvalidChatIdError: new InvalidChatIdError("../x", "why"),
  TurnSequenceError: new TurnSequenceError({ chatId: "c", expectedSeq: 2, actualSeq: 5 }),
  ChatBusyError: new ChatBusyError("c"),
  ContextCapabilityMissingError: new ContextCapabilityMissingError("acp"),
  BranchCapabilityMissingError: new BranchCapabilityMissingError("acp"),
  LearnerFailedError: new LearnerFailedError("c"),
  TranscriptCorruptError: new TranscriptCorruptError({ chatId: "c", location: "a", keptAt: "b", reason: "r" }),
  TranscriptFieldsInvalidError: new TranscriptFieldsInvalidError("c", "fold is not a number"),
  ChatLogCorruptError: unreadableLogLine({ chatId: "c", location: "a", line: 3, reason: "r" }),
  ChatStoreReadError: new ChatStoreReadError({ chatId: "c", location: "a", cause: new Error("EACCES") }),
  ChatStoreWriteError: new ChatStoreWriteError({ chatId: "c", location: "a", cause: { code: "ENOSPC" } }),
  InvalidChatRecordError: new InvalidChatRecordError({ chatId: "c", record: "transcript", reason: "r" }),
  ChatStoreLockedError: new ChatStoreLockedError({ root: "/r", lockPath: "/r/.lock", holderPid: 7, holderHost: "h" }),
  ProviderCallError: new ProviderCallError({
    provider: "openai",
    problem: { kind: "offline", title: defaultProblemTitle("offline"), next: { type: "retry" } },
  }),
  ProblemResponse: new ProblemResponse({
    problem: { type: "urn:conch:problem:busy", title: "Busy", status: 409 },
  }),
  ChatLeaseEndedError: new ChatLeaseEndedError("c", "lost"),
  EmptyTurnStreamError: new EmptyTurnStreamError("c", 4),
  RemoteEngineError: new RemoteEngineError({ status: 502, problem: null }),
  SchemaTooNewError: new SchemaTooNewError(9, 4),
  SchemaNotMigratedError: new SchemaNotMigratedError(0, 4),
  ChatImportConflictError: new ChatImportConflictError({
    chatId: "c",
    logPath: "/r/c.jsonl",
    databaseMessages: 2,
    fileMessages: 4,
  }),
  NacreChatRefusedError: new NacreChatRefusedError("edit"),
} as const;

type ExampleName = keyof typeof examples;
/** Each class, by the name of its example. */
const classes = {
  InvalidChatIdError,
  TurnSequenceError,
  ChatBusyError,
  ContextCapabilityMissingError,
  BranchCapabilityMissingError,
  LearnerFailedError,
  TranscriptCorruptError,
  TranscriptFieldsInvalidError,
  ChatLogCorruptError,
  ChatStoreReadError,
  ChatStoreWriteError,
  InvalidChatRecordError,
  ChatStoreLockedError,
  ProviderCallError,
  ProblemResponse,
  ChatLeaseEndedError,
  EmptyTurnStreamError,
  RemoteEngineError,
  SchemaTooNewError,
  SchemaNotMigratedError,
  ChatImportConflictError,
  NacreChatRefusedError,
} satisfies Record<ExampleName, { isInstance(error: unknown): boolean }>;
const names = Object.keys(examples) as ExampleName[];

describe("error classes", () => {
  it("should have an example here for every error class the module exports", () => {
    const exported = Object.entries(errors)
      .filter(([, value]) => typeof value === "function" && value.prototype instanceof EngineClientError)
      .map(([name]) => name);
    expect(exported.sort()).toEqual([...names].sort());
  });

  it.each(names)(
    "given a %s, should be recognised by its own isInstance and the base one, by marker, and by no other class",
    (name) => {
      const error = examples[name];
      expect(error.name).toBe(name);
      expect(classes[name].isInstance(error)).toBe(true);
      expect(EngineClientError.isInstance(error)).toBe(true);
      for (const other of names) if (other !== name) expect(classes[other].isInstance(error)).toBe(false);
      // A look-alike with the same name and message is not one.
      const lookAlike = Object.assign(new Error(error.message), { name });
      expect(classes[name].isInstance(lookAlike)).toBe(false);
      expect(EngineClientError.isInstance(lookAlike)).toBe(false);
    },
  );

  it("given an error made by another copy of the module, should recognise it where instanceof does not", async () => {
    vi.resetModules();
    const copy = await import("./errors.js");
    const busy = new copy.ChatBusyError("c");
    expect(busy).not.toBeInstanceOf(ChatBusyError);
    expect(ChatBusyError.isInstance(busy)).toBe(true);
    expect(EngineClientError.isInstance(busy)).toBe(true);
    expect(TurnSequenceError.isInstance(busy)).toBe(false);
    expect(copy.ChatBusyError.isInstance(new ChatBusyError("c"))).toBe(true);
  });

  it("should keep the fields each error carries", () => {
    expect(examples.ChatStoreWriteError.quotaExceeded).toBe(true);
    expect(examples.ChatLogCorruptError).toMatchObject({ line: 3, repaired: false, keptMessages: 2 });
    expect(examples.ChatLeaseEndedError.message).toMatch(/another instance took it/);
    expect(examples.SchemaNotMigratedError).toMatchObject({ found: 0, supported: 4 });
    expect(examples.ProviderCallError.isRetryable).toBe(true);
  });
});

describe("defaultErrorHandler", () => {
  it("should write the error to console.error, saying during what and whose chat", () => {
    const written = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const error = new ChatBusyError("c");
      defaultErrorHandler(error, { during: "save", chatId: "c" });
      defaultErrorHandler(error, { during: "request" });
      expect(written.mock.calls).toEqual([
        ["conch (save, chat c):", error],
        ["conch (request):", error],
      ]);
    } finally {
      written.mockRestore();
    }
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
