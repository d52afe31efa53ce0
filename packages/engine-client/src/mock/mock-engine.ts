import { abortReason, delay } from "../abort.js";
import { computeBudget } from "../context/budget.js";
import { resolveWindow } from "../context/window.js";
import type {
  BranchCapability,
  ChatSnapshot,
  CompactOptions,
  CompactResult,
  ContextUsage,
  EngineCapabilities,
  LoadChatOptions,
  TurnInput,
} from "../engine.js";
import { ChatBusyError, isAbortError, TurnSequenceError } from "../errors.js";
import type { CompactionReason, EngineEvent, EngineEventOf, HealthNote, SummaryState } from "../events.js";
import { createAnswer } from "../kit/answer.js";
import { branchPath, newestLeafThrough, nextLogSeq, openBranchTurn, withSiblings } from "../kit/branch-tree.js";
import { createFanOut } from "../kit/fan-out.js";
import { endTurn, failTurn, startTurn } from "../kit/turn-book.js";
import { openTurn } from "../kit/turn-open.js";
import { createTurnRunner, type Turn } from "../kit/turn-runner.js";
import { type ChatMessage, emptyUsage, type Usage } from "../messages.js";
import {
  chunk,
  createMockChatStore,
  defaultMockModel,
  defaultReply,
  defaultSummarise,
  type MockChat,
  type MockEngine,
  type MockEngineScript,
  type MockTurnScript,
  mockSystemPromptTokens,
  roughTokens,
  seedMockChats,
  sizeOf,
} from "./mock-script.js";

export type {
  MockChat,
  MockChatSeed,
  MockChatStore,
  MockEngine,
  MockEngineScript,
  MockTurnScript,
  MockTurns,
} from "./mock-script.js";
export { createMockChatStore } from "./mock-script.js";

/**
 * A scripted engine that declares the `context` capability: it streams scripted replies, plays folds,
 * quiet retries and turn problems at given turns, and folds on request. It runs on the engine kit like every
 * engine (one turn runner, one per-chat queue, listeners isolated). The same script gives the same events
 * (pass `now` for the same timestamps too).
 */
export function createMockEngine(script: MockEngineScript = {}): MockEngine {
  const events = createFanOut<EngineEvent>(script.onError);
  const runner = createTurnRunner({ emit: events.emit });
  const store = script.store ?? createMockChatStore();
  seedMockChats(store, script.chats ?? {});
  const now = script.now ?? Date.now;
  const model = script.model ?? defaultMockModel;
  const summaryModel = script.summaryModel ?? "mock-small";
  const summaryModelName = script.summaryModelName ?? (script.summaryModel === undefined ? "Mock Small" : undefined);
  const chunkSize = Math.max(1, script.chunkSize ?? 12);
  const compactionDelayMs = script.compactionDelayMs ?? 0;
  const summarise = script.summarise ?? defaultSummarise;
  const hasContextCapability = script.context !== false;
  const hasBranchCapability = script.branches !== false;
  const calls: TurnInput[] = [];
  const compactCalls: Array<{ chatId: string; keep?: string }> = [];
  let noteCounter = 0;

  function turnScript(input: TurnInput, call: number): MockTurnScript {
    const turns = script.turns;
    if (turns === undefined) return {};
    if (typeof turns === "function") return turns(input, call) ?? {};
    if (Array.isArray(turns)) return (turns as readonly MockTurnScript[])[call] ?? {};
    return turns as MockTurnScript;
  }

  function activeLeaf(chat: MockChat): number {
    return chat.activeLeaf ?? chat.messages.at(-1)?.seq ?? -1;
  }

  /** The active branch: the path from the root to the active leaf. */
  function branch(chat: MockChat): ChatMessage[] {
    // A log that never branched is its own active branch; a seeded tree's is the path to its newest message.
    const linear = chat.activeLeaf === null && chat.messages.every((message) => message.parent === undefined);
    return linear ? chat.messages : branchPath(chat.messages, activeLeaf(chat));
  }

  /** Makes `leaf` the active leaf; the branch's summary is the newest whose first kept message is on it. */
  function activate(chat: MockChat, leaf: number): void {
    chat.activeLeaf = leaf;
    const onBranch = new Set(branch(chat).map((message) => message.seq));
    chat.summary = chat.folds.findLast((summary) => onBranch.has(summary.firstKeptSeq)) ?? null;
  }

  function keptMessages(chat: MockChat): ChatMessage[] {
    const first = chat.summary?.firstKeptSeq ?? 0;
    return branch(chat).filter((message) => message.seq >= first);
  }

  function contextUsage(chat: MockChat): ContextUsage {
    // The engine's own rules for the window and the budget, over the mock's rough count.
    const { window } = resolveWindow({ model });
    const { budget } = computeBudget({ window, systemTokens: mockSystemPromptTokens });
    const usedTokens = mockSystemPromptTokens + sizeOf(keptMessages(chat), chat.summary?.text ?? null).tokens;
    return { usedTokens, window, budget, factor: 1, share: window > 0 ? usedTokens / window : 1 };
  }

  /** Turn-start seqs: the person's messages that open a turn. */
  function turnStarts(chat: MockChat): number[] {
    return branch(chat)
      .filter((message) => message.role === "user")
      .map((message) => message.seq);
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
    const path = branch(chat);
    const folded = path.filter((message) => message.seq >= previousFirst && message.seq < firstKeptSeq);
    const text = written.text ?? summarise(folded, chat.summary?.text ?? null, written.keep);
    const writer = written.writer ?? summaryModel;
    const kept = path.filter((message) => message.seq >= firstKeptSeq);
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
    chat.folds.push(summary);
    return summary;
  }

  /** The scripted fold of a turn, before it is answered. */
  async function playCompaction(turn: Turn, chat: MockChat, compaction: NonNullable<MockTurnScript["compaction"]>) {
    const { chatId } = turn;
    const reason = compaction.reason ?? "budget";
    const keepTurns = Math.max(1, compaction.keepTurns ?? 2);
    const starts = turnStarts(chat);
    const firstKeptSeq = starts[Math.max(0, starts.length - keepTurns)] ?? turn.input.seq;
    if (firstKeptSeq <= (chat.summary?.firstKeptSeq ?? 0)) {
      turn.send({ type: "compaction-skipped", chatId, reason, why: "nothing-to-fold" });
      return;
    }
    turn.send({ type: "compacting", chatId, reason, firstKeptSeq });
    await delay(compactionDelayMs, turn.input.abortSignal);
    const summary = fold(chat, firstKeptSeq, reason, {
      text: compaction.summary,
      ...(compaction.model ? { writer: compaction.model } : {}),
    }) as SummaryState;
    turn.send({ type: "compacted", chatId, ...summary });
  }

  async function runTurn(turn: Turn): Promise<EngineEventOf<"turn-end">> {
    const { input, chatId } = turn;
    const chat = store.chat(chatId);
    const opened = hasBranchCapability
      ? openBranchTurn(input, chat.messages, activeLeaf(chat), now)
      : { ...openTurn(input, chat.messages, now), answer: undefined };
    const call = calls.length;
    calls.push(input);
    const scripted = turnScript(input, call);
    if (!opened.retrying) chat.messages.push(opened.message);
    if (hasBranchCapability) activate(chat, opened.message.seq);
    startTurn(turn, chat, opened.message);
    const ending = {
      ...(hasContextCapability ? { contextUsage: () => contextUsage(chat) } : {}),
      ...(script.onError ? { onError: script.onError } : {}),
    };
    const signal = input.abortSignal;
    const delayMs = scripted.delayMs ?? script.delayMs ?? 0;
    const answer = createAnswer(turn, model.id, opened.answer);
    let usage: Usage = emptyUsage;
    try {
      if (signal?.aborted) throw abortReason(signal);
      if (scripted.compaction) await playCompaction(turn, chat, scripted.compaction);
      if (scripted.summaryFailed) {
        const text = "No model wrote a summary; the earliest turns were dropped and the previous summary stays.";
        turn.send({ type: "health-note", chatId, note: addNote(chatId, chat, "summary-failed", text) });
      }
      if (scripted.healed) {
        const provider = scripted.healed.provider ?? "mock";
        const window = scripted.healed.window;
        await delay(delayMs, signal);
        const note = addNote(
          chatId,
          chat,
          "healed",
          `${model.displayName} refused the request as too long${window ? ` (window ${window} tokens)` : ""}; it was shortened and sent again.`,
          { provider, model: model.id },
        );
        turn.send({ type: "healed", chatId, seq: input.seq, provider, model: model.id, ...(window ? { window } : {}) });
        turn.send({ type: "health-note", chatId, note });
      }
      if (scripted.problem) {
        await delay(delayMs, signal);
        return await failTurn(turn, chat, scripted.problem, usage, ending);
      }
      answer.start();
      for (const piece of chunk(scripted.thinking ?? "", chunkSize)) {
        await delay(delayMs, signal);
        answer.thinking(piece);
      }
      for (const piece of chunk(scripted.reply ?? defaultReply(input), chunkSize)) {
        await delay(delayMs, signal);
        answer.text(piece);
      }
      const message = keptAnswer(answer.message(now(), scripted.finishReason ?? "stop"));
      chat.messages.push(message);
      if (hasBranchCapability) chat.activeLeaf = message.seq;
      answer.end(message);
      usage = {
        inputTokens: scripted.usage?.inputTokens ?? contextUsage(chat).usedTokens,
        outputTokens: scripted.usage?.outputTokens ?? roughTokens(writtenText(message)),
        cachedInputTokens: scripted.usage?.cachedInputTokens ?? 0,
      };
      turn.send({ type: "usage", chatId, usage });
      return await endTurn(turn, chat, "done", usage, ending);
    } catch (error) {
      if (!isAbortError(error)) throw error;
      // What was already written stays in the log, marked as cut short.
      if (answer.parts.length > 0) {
        const message = keptAnswer(answer.message(now(), "aborted"));
        chat.messages.push(message);
        if (hasBranchCapability) chat.activeLeaf = message.seq;
        answer.end(message);
      }
      return await endTurn(turn, chat, "aborted", usage, ending);
    }
  }

  const context = {
    compact(chatId: string, options: CompactOptions = {}): Promise<CompactResult> {
      compactCalls.push({ chatId, ...(options.keep !== undefined ? { keep: options.keep } : {}) });
      // In the chat's queue: a fold on request waits for the turn that runs.
      return runner.queued(chatId, async () => {
        const chat = store.chat(chatId);
        const newest = turnStarts(chat).at(-1);
        const previousFirst = chat.summary?.firstKeptSeq ?? 0;
        if (newest === undefined || newest <= previousFirst) {
          events.emit({ type: "compaction-skipped", chatId, reason: "manual", why: "nothing-to-fold" });
          return { status: "nothing-to-fold" };
        }
        events.emit({ type: "compacting", chatId, reason: "manual", firstKeptSeq: newest });
        try {
          await delay(compactionDelayMs, options.abortSignal);
        } catch (error) {
          if (!isAbortError(error)) throw error;
          events.emit({ type: "compaction-skipped", chatId, reason: "manual", why: "aborted" });
          return { status: "aborted" };
        }
        const keep = options.keep !== undefined ? { keep: options.keep } : {};
        const summary = fold(chat, newest, "manual", keep) as SummaryState;
        events.emit({ type: "compacted", chatId, ...summary });
        return { status: "compacted", summary };
      });
    },
    async usage(chatId: string): Promise<ContextUsage> {
      return contextUsage(store.chat(chatId));
    },
  };

  function snapshot(chatId: string, chat: MockChat, page?: LoadChatOptions["page"]): ChatSnapshot {
    const path = branch(chat);
    const leaf = path.at(-1)?.seq;
    // A page of the branch, from its leaf back: the newest `limit` messages before `before`.
    const before = page ? path.filter((message) => page.before === undefined || message.seq < page.before) : path;
    const shown = page ? before.slice(Math.max(0, before.length - page.limit)) : path;
    const problem = chat.problem && path.some((message) => message.seq === chat.problem?.seq) ? chat.problem : null;
    return {
      chatId,
      messages: hasBranchCapability ? withSiblings(shown, chat.messages) : [...chat.messages],
      ...(page ? { hasOlder: shown.length < before.length } : {}),
      ...(hasBranchCapability ? { nextSeq: nextLogSeq(chat.messages) } : {}),
      ...(hasBranchCapability && leaf !== undefined ? { activeLeaf: leaf } : {}),
      summary: chat.summary,
      healthNotes: [...chat.healthNotes],
      model,
      contextUsage: hasContextCapability ? contextUsage(chat) : null,
      problem,
      usage: chat.usage,
    };
  }

  const branches: BranchCapability = {
    async selectBranch(chatId, seq, options = {}) {
      if (runner.isBusy(chatId)) throw new ChatBusyError(chatId);
      if (options.abortSignal?.aborted) throw abortReason(options.abortSignal);
      const chat = store.chat(chatId);
      const leaf = newestLeafThrough(chat.messages, seq);
      if (leaf === null) {
        throw new TurnSequenceError({ chatId, expectedSeq: nextLogSeq(chat.messages), actualSeq: seq });
      }
      activate(chat, leaf);
      return snapshot(chatId, chat, options.page);
    },
  };
  const capabilities: EngineCapabilities = {
    ...(hasContextCapability ? { context } : {}),
    ...(hasBranchCapability ? { branches } : {}),
  };

  return {
    specificationVersion: "v1",
    id: script.id ?? "mock",
    displayName: script.displayName ?? "Mock engine",
    capabilities,
    calls,
    compactCalls,
    async loadChat(chatId): Promise<ChatSnapshot> {
      return snapshot(chatId, store.chat(chatId));
    },
    subscribe: events.subscribe,
    sendTurn: (input) => runner.start(input, runTurn),
  };
}

/** The mock's answers always end with a text part (empty when only reasoning was written). */
function keptAnswer(message: ChatMessage): ChatMessage {
  if (message.parts.some((part) => part.type === "text")) return message;
  return { ...message, parts: [...message.parts, { type: "text", text: "" }] };
}

function writtenText(message: ChatMessage): string {
  return message.parts.map((part) => (part.type === "text" || part.type === "thinking" ? part.text : "")).join("");
}
