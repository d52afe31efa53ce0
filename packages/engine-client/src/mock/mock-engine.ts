import { abortReason, createChannel, delay } from "../channel.js";
import type {
  ChatSnapshot,
  CompactOptions,
  CompactResult,
  ContextUsage,
  Engine,
  EngineListener,
  TurnInput,
  TurnStream,
  Unsubscribe,
} from "../engine.js";
import { ChatBusyError, isAbortError, TurnSequenceError } from "../errors.js";
import type {
  CompactionReason,
  EngineEvent,
  EngineEventOf,
  HealthNote,
  SummaryState,
  TranscriptSize,
} from "../events.js";
import { addUsage, type ChatMessage, emptyUsage, type MessagePart, type ModelInfo, type Usage } from "../messages.js";
import type { TurnProblem } from "../problems.js";

/** One scripted turn of the mock engine. */
export interface MockTurnScript {
  /** The reply, streamed in chunks. Default: a short deterministic answer naming the person's words. */
  readonly reply?: string;
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
}

export type MockTurns =
  | MockTurnScript
  | readonly MockTurnScript[]
  | ((input: TurnInput, call: number) => MockTurnScript | undefined);

/** A chat already in the mock engine when it starts. */
export interface MockChatSeed {
  readonly messages: readonly ChatMessage[];
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
  /** Chats present from the start, by id. */
  readonly chats?: Readonly<Record<string, MockChatSeed>>;
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
  /** Writes the summary of a fold on request. Default: the person's requests, listed. */
  readonly summarise?: (folded: readonly ChatMessage[], previous: string | null, keep?: string) => string;
  /** The clock. Default `Date.now`; pass a fixed one for deterministic timestamps. */
  readonly now?: () => number;
}

/** A mock engine, with what it was asked recorded. */
export interface MockEngine extends Engine {
  /** Every `sendTurn` input, in order. */
  readonly calls: TurnInput[];
  /** Every `compact` request, in order. */
  readonly compactCalls: Array<{ chatId: string; keep?: string }>;
}

interface MockChat {
  messages: ChatMessage[];
  summary: SummaryState | null;
  healthNotes: HealthNote[];
  problem: { seq: number; problem: TurnProblem } | null;
  usage: Usage;
  busy: boolean;
}

const defaultModel: ModelInfo = {
  id: "mock-large",
  displayName: "Mock Large",
  context: 32_000,
  ready: true,
  local: false,
  provider: "mock",
};

const systemPromptTokens = 500;

/** Rough tokens of a text for the mock's own bookkeeping (the real estimate lives in `context/`). */
function roughTokens(text: string): number {
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

function sizeOf(messages: readonly ChatMessage[], summary: string | null): TranscriptSize {
  let tokens = summary ? roughTokens(summary) : 0;
  for (const message of messages) tokens += messageTokens(message);
  return { messages: messages.length, tokens };
}

function defaultReply(input: TurnInput): string {
  const words = input.text.trim().split(/\s+/).slice(0, 8).join(" ");
  return `Here is a scripted answer to “${words}”. The mock engine streams it in small pieces so that the page can show a reply being written.`;
}

function defaultSummarise(folded: readonly ChatMessage[], previous: string | null, keep?: string): string {
  const requests = folded
    .filter((message) => message.role === "user")
    .map((message) => message.parts.map((part) => (part.type === "text" ? part.text : "")).join(" "))
    .map((text) => `- The person asked: ${text.slice(0, 160)}`);
  const lines = [...(keep ? [`Kept above all: ${keep}`] : []), ...(previous ? [previous] : []), ...requests];
  return lines.join("\n");
}

function chunk(text: string, size: number): string[] {
  // Split on code points so that no delta ends inside a surrogate pair.
  const points = Array.from(text);
  const chunks: string[] = [];
  for (let i = 0; i < points.length; i += size) chunks.push(points.slice(i, i + size).join(""));
  return chunks;
}

/**
 * A scripted engine that declares the `context` capability: it streams scripted replies, plays folds,
 * quiet retries and turn problems at given turns, and folds on request. The same script gives the same
 * events (pass `now` for the same timestamps too).
 */
export function createMockEngine(script: MockEngineScript = {}): MockEngine {
  const listeners = new Set<EngineListener>();
  const chats = new Map<string, MockChat>();
  const now = script.now ?? Date.now;
  const model = script.model ?? defaultModel;
  const summaryModel = script.summaryModel ?? "mock-small";
  const summaryModelName = script.summaryModelName ?? (script.summaryModel === undefined ? "Mock Small" : undefined);
  const chunkSize = Math.max(1, script.chunkSize ?? 12);
  const delayMs = script.delayMs ?? 0;
  const compactionDelayMs = script.compactionDelayMs ?? 0;
  const summarise = script.summarise ?? defaultSummarise;
  const calls: TurnInput[] = [];
  const compactCalls: Array<{ chatId: string; keep?: string }> = [];
  let noteCounter = 0;

  for (const [chatId, seed] of Object.entries(script.chats ?? {})) {
    chats.set(chatId, {
      messages: [...seed.messages],
      summary: seed.summary ?? null,
      healthNotes: [...(seed.healthNotes ?? [])],
      problem: null,
      usage: emptyUsage,
      busy: false,
    });
  }

  function chatFor(chatId: string): MockChat {
    let chat = chats.get(chatId);
    if (!chat) {
      chat = { messages: [], summary: null, healthNotes: [], problem: null, usage: emptyUsage, busy: false };
      chats.set(chatId, chat);
    }
    return chat;
  }

  function emit(event: EngineEvent): void {
    for (const listener of [...listeners]) listener(event);
  }

  function turnScript(input: TurnInput, call: number): MockTurnScript {
    const turns = script.turns;
    if (turns === undefined) return {};
    if (typeof turns === "function") return turns(input, call) ?? {};
    if (Array.isArray(turns)) return (turns as readonly MockTurnScript[])[call] ?? {};
    return turns as MockTurnScript;
  }

  function keptMessages(chat: MockChat): ChatMessage[] {
    const first = chat.summary?.firstKeptSeq ?? 0;
    return chat.messages.filter((message) => message.seq >= first);
  }

  function contextUsage(chat: MockChat): ContextUsage {
    const window = model.context ?? 32_000;
    const answerRoom = Math.min(16_000, Math.max(1_000, Math.round(window * 0.15)));
    const budget = Math.max(0, Math.min(Math.floor(window * 0.9) - answerRoom - systemPromptTokens, 100_000));
    const usedTokens = systemPromptTokens + sizeOf(keptMessages(chat), chat.summary?.text ?? null).tokens;
    return { usedTokens, window, budget, factor: 1, share: usedTokens / window };
  }

  /** Turn-start seqs: the person's messages that open a turn. */
  function turnStarts(chat: MockChat): number[] {
    return chat.messages.filter((message) => message.role === "user").map((message) => message.seq);
  }

  function addNote(
    chatId: string,
    chat: MockChat,
    kind: HealthNote["kind"],
    text: string,
    extra?: Partial<HealthNote>,
  ) {
    noteCounter += 1;
    const note: HealthNote = { id: `mock-note-${noteCounter}`, chatId, kind, text, at: now(), ...extra };
    chat.healthNotes = [note, ...chat.healthNotes];
    return note;
  }

  /** Folds everything before `firstKeptSeq`; returns null when that folds nothing new. */
  function fold(
    chat: MockChat,
    firstKeptSeq: number,
    reason: CompactionReason,
    written: { readonly text?: string; readonly keep?: string; readonly writer?: string } = {},
  ): SummaryState | null {
    const previousFirst = chat.summary?.firstKeptSeq ?? 0;
    if (firstKeptSeq <= previousFirst) return null;
    const before = sizeOf(keptMessages(chat), chat.summary?.text ?? null);
    const folded = chat.messages.filter((message) => message.seq >= previousFirst && message.seq < firstKeptSeq);
    const text = written.text ?? summarise(folded, chat.summary?.text ?? null, written.keep);
    const writer = written.writer ?? summaryModel;
    const kept = chat.messages.filter((message) => message.seq >= firstKeptSeq);
    const foldedSize = sizeOf(folded, null);
    const summary: SummaryState = {
      text,
      model: writer,
      ...(summaryModelName && writer === summaryModel ? { modelName: summaryModelName } : {}),
      firstKeptSeq,
      reason,
      before,
      folded: {
        messages: (chat.summary?.folded?.messages ?? previousFirst) + foldedSize.messages,
        tokens: (chat.summary?.folded?.tokens ?? 0) + foldedSize.tokens,
      },
      after: sizeOf(kept, text),
      at: now(),
    };
    chat.summary = summary;
    return summary;
  }

  const context = {
    async compact(chatId: string, options: CompactOptions = {}): Promise<CompactResult> {
      compactCalls.push({ chatId, ...(options.keep !== undefined ? { keep: options.keep } : {}) });
      const chat = chatFor(chatId);
      const starts = turnStarts(chat);
      const newest = starts.at(-1);
      const previousFirst = chat.summary?.firstKeptSeq ?? 0;
      if (newest === undefined || newest <= previousFirst) {
        emit({ type: "compaction-skipped", chatId, reason: "manual", why: "nothing-to-fold" });
        return { status: "nothing-to-fold" };
      }
      emit({ type: "compacting", chatId, reason: "manual" });
      try {
        await delay(compactionDelayMs, options.abortSignal);
      } catch (error) {
        if (!isAbortError(error)) throw error;
        emit({ type: "compaction-skipped", chatId, reason: "manual", why: "aborted" });
        return { status: "aborted" };
      }
      const summary = fold(
        chat,
        newest,
        "manual",
        options.keep !== undefined ? { keep: options.keep } : {},
      ) as SummaryState;
      emit({ type: "compacted", chatId, ...summary });
      return { status: "compacted", summary };
    },
    async usage(chatId: string): Promise<ContextUsage> {
      return contextUsage(chatFor(chatId));
    },
  };

  const engine: MockEngine = {
    specificationVersion: "v1",
    id: script.id ?? "mock",
    displayName: script.displayName ?? "Mock engine",
    capabilities: script.context === false ? {} : { context },
    calls,
    compactCalls,

    async loadChat(chatId): Promise<ChatSnapshot> {
      const chat = chatFor(chatId);
      return {
        chatId,
        messages: [...chat.messages],
        summary: chat.summary,
        healthNotes: [...chat.healthNotes],
        model,
        contextUsage: script.context === false ? null : contextUsage(chat),
        problem: chat.problem,
        usage: chat.usage,
      };
    },

    subscribe(listener): Unsubscribe {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    sendTurn(input): TurnStream {
      const chat = chatFor(input.chatId);
      const last = chat.messages.at(-1);
      const retrying = input.retry === true && last?.role === "user" && last.seq === input.seq;
      const expectedSeq = retrying ? input.seq : (last?.seq ?? -1) + 1;
      if (input.seq !== expectedSeq) {
        throw new TurnSequenceError({ chatId: input.chatId, expectedSeq, actualSeq: input.seq });
      }
      if (chat.busy) throw new ChatBusyError(input.chatId);
      const call = calls.length;
      calls.push(input);
      const turn = turnScript(input, call);
      const channel = createChannel<EngineEvent>();
      const { chatId } = input;
      chat.busy = true;
      chat.problem = null;

      const send = (event: EngineEvent) => {
        channel.push(event);
        emit(event);
      };

      const run = async (): Promise<EngineEventOf<"turn-end">> => {
        let usage = emptyUsage;
        const signal = input.abortSignal;
        const personMessage: ChatMessage = retrying
          ? (last as ChatMessage)
          : input.toolResults?.length
            ? { seq: input.seq, role: "tool", parts: [...input.toolResults], createdAt: now() }
            : {
                seq: input.seq,
                role: "user",
                parts: [{ type: "text", text: input.text }, ...(input.attachments ?? [])],
                createdAt: now(),
              };
        if (!retrying) chat.messages.push(personMessage);
        send({ type: "turn-start", chatId, message: personMessage });

        const end = (status: EngineEventOf<"turn-end">["status"]): EngineEventOf<"turn-end"> => {
          chat.usage = addUsage(chat.usage, usage);
          const event: EngineEventOf<"turn-end"> = { type: "turn-end", chatId, seq: input.seq, status, usage };
          send(event);
          return event;
        };

        const assistantSeq = input.seq + 1;
        let written = "";
        let thought = "";
        try {
          if (signal?.aborted) throw abortReason(signal);
          if (turn.compaction) {
            const reason = turn.compaction.reason ?? "budget";
            const keepTurns = Math.max(1, turn.compaction.keepTurns ?? 2);
            const starts = turnStarts(chat);
            const firstKeptSeq = starts[Math.max(0, starts.length - keepTurns)] ?? input.seq;
            if (firstKeptSeq > (chat.summary?.firstKeptSeq ?? 0)) {
              send({ type: "compacting", chatId, reason });
              await delay(compactionDelayMs, signal);
              const summary = fold(chat, firstKeptSeq, reason, {
                text: turn.compaction.summary,
                ...(turn.compaction.model ? { writer: turn.compaction.model } : {}),
              }) as SummaryState;
              send({ type: "compacted", chatId, ...summary });
            } else {
              send({ type: "compaction-skipped", chatId, reason, why: "nothing-to-fold" });
            }
          }
          if (turn.summaryFailed) {
            const note = addNote(
              chatId,
              chat,
              "summary-failed",
              "No model wrote a summary; the earliest turns were dropped and the previous summary stays.",
            );
            send({ type: "health-note", chatId, note });
          }
          if (turn.healed) {
            const provider = turn.healed.provider ?? "mock";
            const window = turn.healed.window;
            await delay(delayMs, signal);
            const note = addNote(
              chatId,
              chat,
              "healed",
              `${model.displayName} refused the request as too long${window ? ` (window ${window} tokens)` : ""}; it was shortened and sent again.`,
              { provider, model: model.id },
            );
            send({ type: "healed", chatId, seq: input.seq, provider, model: model.id, ...(window ? { window } : {}) });
            send({ type: "health-note", chatId, note });
          }
          if (turn.problem) {
            await delay(delayMs, signal);
            chat.problem = { seq: input.seq, problem: turn.problem };
            send({ type: "turn-problem", chatId, seq: input.seq, problem: turn.problem });
            return end("problem");
          }

          send({ type: "message-start", chatId, seq: assistantSeq, role: "assistant", model: model.id });
          for (const piece of chunk(turn.thinking ?? "", chunkSize)) {
            await delay(delayMs, signal);
            thought += piece;
            send({ type: "thinking-delta", chatId, seq: assistantSeq, delta: piece });
          }
          for (const piece of chunk(turn.reply ?? defaultReply(input), chunkSize)) {
            await delay(delayMs, signal);
            written += piece;
            send({ type: "text-delta", chatId, seq: assistantSeq, delta: piece });
          }
          const message = assistantMessage(assistantSeq, thought, written, model.id, now());
          chat.messages.push(message);
          send({ type: "message-end", chatId, message, finishReason: "stop" });
          usage = {
            inputTokens: turn.usage?.inputTokens ?? contextUsage(chat).usedTokens,
            outputTokens: turn.usage?.outputTokens ?? roughTokens(written + thought),
            cachedInputTokens: turn.usage?.cachedInputTokens ?? 0,
          };
          send({ type: "usage", chatId, usage });
          return end("done");
        } catch (error) {
          if (!isAbortError(error)) throw error;
          // What was already written stays in the log, marked as cut short.
          if (written || thought) {
            const message = assistantMessage(assistantSeq, thought, written, model.id, now());
            chat.messages.push(message);
            send({ type: "message-end", chatId, message, finishReason: "aborted" });
          }
          return end("aborted");
        } finally {
          chat.busy = false;
          channel.close();
        }
      };

      const done = run();
      done.catch(() => channel.close());
      return {
        done,
        [Symbol.asyncIterator]: () => channel[Symbol.asyncIterator](),
      };
    },
  };
  return engine;
}

function assistantMessage(seq: number, thought: string, text: string, model: string, at: number): ChatMessage {
  const parts: MessagePart[] = [];
  if (thought) parts.push({ type: "thinking", text: thought });
  parts.push({ type: "text", text });
  return { seq, role: "assistant", parts, model, createdAt: at };
}
