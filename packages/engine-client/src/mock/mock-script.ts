import type { Engine, TurnInput } from "../engine.js";
import type { ErrorHandler } from "../errors.js";
import type { CompactionReason, HealthNote, SummaryState, TranscriptSize } from "../events.js";
import { type ChatMessage, emptyUsage, type MessagePart, type ModelInfo, type Usage } from "../messages.js";
import type { TurnProblem } from "../problems.js";

/** One scripted turn of the mock engine. */
export interface MockTurnScript {
  /** The reply, streamed in chunks. Default: a short deterministic answer naming the person's words. */
  readonly reply?: string;
  /** How the reply ends: `length` plays a reply cut off at the output limit. Default `stop`. */
  readonly finishReason?: "stop" | "length";
  /** Reasoning streamed before the reply. */
  readonly thinking?: string;
  /** Play a fold before answering: `compacting`, then `compacted` with this summary. */
  readonly compaction?: {
    readonly summary: string;
    /** The model named as the summary's writer. Default: the script's summary model. */
    readonly model?: string;
    /** Default `budget`. */
    readonly reason?: CompactionReason;
    /** Whole turns kept, the one being answered included. Default 2. */
    readonly keepTurns?: number;
  };
  /** Play a quiet retry after a "too long" refusal before answering. */
  readonly healed?: { readonly provider?: string; readonly window?: number };
  /** Play a summariser failure (a health note; the turns are dropped without a new summary). */
  readonly summaryFailed?: boolean;
  /** End the turn with this problem instead of answering. */
  readonly problem?: TurnProblem;
  /** Usage to report. Default: estimated from the text. */
  readonly usage?: Partial<Usage>;
  /** Milliseconds between this turn's deltas. Default: the engine's `delayMs`. */
  readonly delayMs?: number;
}

export type MockTurns =
  | MockTurnScript
  | readonly MockTurnScript[]
  | ((input: TurnInput, call: number) => MockTurnScript | undefined);

/** A chat already in the mock engine when it starts. */
export interface MockChatSeed {
  /** The log (every branch, in seq order: a message's `parent` says which it continues). */
  readonly messages: readonly ChatMessage[];
  /** The active branch's last message. Default: the log's newest. */
  readonly activeLeaf?: number;
  readonly summary?: SummaryState | null;
  readonly healthNotes?: readonly HealthNote[];
}

export interface MockEngineScript {
  /** Default `mock`. */
  readonly id?: string;
  /** Default `Mock engine`. */
  readonly displayName?: string;
  /** The chat's model. Default: `mock-large`, a 32,000-token window. */
  readonly model?: ModelInfo;
  /** Models the engine could switch to (offered by too-long problems). */
  readonly models?: readonly ModelInfo[];
  /** The model named as a summary's writer. Default `mock-small`. */
  readonly summaryModel?: string;
  /** Its display name. Default `Mock Small` for the default writer, else none. */
  readonly summaryModelName?: string;
  /** Chats present from the start, by id (added to `store` when it lacks them). */
  readonly chats?: Readonly<Record<string, MockChatSeed>>;
  /**
   * Where the chats live. Default: the engine's own. Pass one store to two mock engines to play two tabs on
   * one store, or to a new engine to play a reload.
   */
  readonly store?: MockChatStore;
  /** A function, one result (every call), or an array consumed per call (then the default reply). */
  readonly turns?: MockTurns;
  /** Characters per `text-delta`. Default 12. */
  readonly chunkSize?: number;
  /** Milliseconds between deltas. Default 0 (tests); the demo uses a few. */
  readonly delayMs?: number;
  /** Milliseconds a fold takes. Default 0. */
  readonly compactionDelayMs?: number;
  /** Declare the `context` capability. Default true. */
  readonly context?: boolean;
  /** Declare the `branches` capability (edit, regenerate, moving between versions). Default true. */
  readonly branches?: boolean;
  /** Writes the summary of a fold on request. Default: the person's requests, listed. */
  readonly summarise?: (folded: readonly ChatMessage[], previous: string | null, keep?: string) => string;
  /** The clock. Default `Date.now`; pass a fixed one for deterministic timestamps. */
  readonly now?: () => number;
  /** Told when a listener throws (the others and the turn go on). Default: `defaultErrorHandler`, which logs it. */
  readonly onError?: ErrorHandler;
}

/** What the mock keeps of a chat (shared by every mock engine over the same store). */
export interface MockChat {
  /** The log, every branch, in seq order. */
  messages: ChatMessage[];
  /** The active branch's last message; null for the log's newest message (a log that never branched). */
  activeLeaf: number | null;
  /** The active branch's latest summary. */
  summary: SummaryState | null;
  /** Every summary written, on any branch: a branch's is the newest whose first kept message is on it. */
  folds: SummaryState[];
  healthNotes: HealthNote[];
  problem: { seq: number; problem: TurnProblem } | null;
  usage: Usage;
}

/** The mock's chats, by id: in memory, shareable between mock engines. */
export interface MockChatStore {
  chat(chatId: string): MockChat;
}

export function createMockChatStore(seeds: Readonly<Record<string, MockChatSeed>> = {}): MockChatStore {
  const chats = new Map<string, MockChat>();
  const store: MockChatStore = {
    chat(chatId) {
      let chat = chats.get(chatId);
      if (!chat) {
        chat = {
          messages: [],
          activeLeaf: null,
          summary: null,
          folds: [],
          healthNotes: [],
          problem: null,
          usage: emptyUsage,
        };
        chats.set(chatId, chat);
      }
      return chat;
    },
  };
  seedMockChats(store, seeds);
  return store;
}

/** Puts seeded chats into a store where those chats are still empty. */
export function seedMockChats(store: MockChatStore, seeds: Readonly<Record<string, MockChatSeed>>): void {
  for (const [chatId, given] of Object.entries(seeds)) {
    const chat = store.chat(chatId);
    if (chat.messages.length > 0) continue;
    chat.messages = [...given.messages];
    chat.activeLeaf = given.activeLeaf ?? null;
    chat.summary = given.summary ?? null;
    chat.folds = chat.summary ? [chat.summary] : [];
    chat.healthNotes = [...(given.healthNotes ?? [])];
  }
}

/** A mock engine, with what it was asked recorded. */
export interface MockEngine extends Engine {
  /** Every `sendTurn` input, in order. */
  readonly calls: TurnInput[];
  /** Every `compact` request, in order. */
  readonly compactCalls: Array<{ chatId: string; keep?: string }>;
}

export const defaultMockModel: ModelInfo = {
  id: "mock-large",
  displayName: "Mock Large",
  context: 32_000,
  ready: true,
  local: false,
  provider: "mock",
};

/** The system prompt the mock pretends to send, in tokens. */
export const mockSystemPromptTokens = 500;

/** Rough tokens of a text for the mock's own bookkeeping (the real estimate lives in `context/`). */
export function roughTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function partText(part: MessagePart): string {
  switch (part.type) {
    case "text":
    case "thinking":
    case "tool-result":
      return part.text;
    case "tool-call":
      return `${part.name}(${part.arguments})`;
    case "picture":
      return "x".repeat(6400);
    default:
      return part satisfies never;
  }
}

function messageTokens(message: ChatMessage): number {
  let tokens = 4;
  for (const part of message.parts) tokens += roughTokens(partText(part));
  return tokens;
}

export function sizeOf(messages: readonly ChatMessage[], summary: string | null): TranscriptSize {
  let tokens = summary ? roughTokens(summary) : 0;
  for (const message of messages) tokens += messageTokens(message);
  return { messages: messages.length, tokens };
}

export function defaultReply(input: TurnInput): string {
  const words = input.text.trim().split(/\s+/).slice(0, 8).join(" ");
  return `Here is a scripted answer to “${words}”. The mock engine streams it in small pieces so that the page can show a reply being written.`;
}

export function defaultSummarise(folded: readonly ChatMessage[], previous: string | null, keep?: string): string {
  const requests = folded
    .filter((message) => message.role === "user")
    .map((message) => message.parts.map((part) => (part.type === "text" ? part.text : "")).join(" "))
    .map((text) => `- The person asked: ${text.slice(0, 160)}`);
  const lines = [...(keep ? [`Kept above all: ${keep}`] : []), ...(previous ? [previous] : []), ...requests];
  return lines.join("\n");
}

export function chunk(text: string, size: number): string[] {
  // Split on code points so that no delta ends inside a surrogate pair.
  const points = Array.from(text);
  const chunks: string[] = [];
  for (let i = 0; i < points.length; i += size) chunks.push(points.slice(i, i + size).join(""));
  return chunks;
}
