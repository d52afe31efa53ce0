import { abortReason } from "../channel.js";
import { type Budget, computeBudget, windowTakes } from "../context/budget.js";
import { estimateTokens, modelFamily } from "../context/estimate.js";
import { factorForModel, raiseFactor } from "../context/factor.js";
import { type FoldMode, type FoldPlan, planFold } from "../context/fold.js";
import { buildRequestMessages } from "../context/frame.js";
import { estimateMessagesTokens } from "../context/message-estimate.js";
import { resolveWindow } from "../context/window.js";
import type {
  ChatSnapshot,
  CompactOptions,
  CompactResult,
  ContextCapability,
  ContextUsage,
  Engine,
} from "../engine.js";
import { assertSafeChatId, isAbortError, TurnSequenceError } from "../errors.js";
import type { CompactionReason, EngineEvent, EngineEventOf, HealthNote, SummaryState } from "../events.js";
import { createAnswer } from "../kit/answer.js";
import { createFanOut } from "../kit/fan-out.js";
import { endTurn, failTurn, startTurn } from "../kit/turn-book.js";
import { type OpenedTurn, openTurn } from "../kit/turn-open.js";
import { createTurnRunner, type Turn } from "../kit/turn-runner.js";
import { type Learner, learnBeforeFold } from "../learning/learner.js";
import { addUsage, type ChatMessage, emptyUsage, type ModelInfo, messageText, type Usage } from "../messages.js";
import { defaultProblemTitle, type TurnProblem } from "../problems.js";
import type { FinishReason, ProviderAdapter, ToolDefinition } from "../providers/provider-adapter.js";
import { ProviderCallError } from "../providers/provider-call-error.js";
import { summariseFolded } from "../summarise/summariser.js";
import type { ChatStore } from "../transcript/chat-store.js";
import { ChatLogCorruptError, TranscriptCorruptError } from "../transcript/errors.js";
import { buildTranscriptFile, type TranscriptFile } from "../transcript/transcript-file.js";
import {
  applyTranscript,
  type ChatRuntime,
  emptyChatRuntime,
  engineFields,
  healthNotesKept,
  keptFromLog,
  TranscriptFieldsInvalidError,
} from "./chat-state.js";

/** Options of {@link createApiEngine}. */
export interface ApiEngineOptions {
  /** The provider adapter the chat talks to (`createOpenAI(...)`, `createAnthropic(...)`, ...). */
  readonly provider: ProviderAdapter;
  /** The chat's model id. Change it later with `setModel`. */
  readonly model: string;
  /** Where the chat's log and the engine's transcript live. */
  readonly store: ChatStore;
  /** Learns the person's words before they are folded (ADR 0055 §4). Default: none. */
  readonly learner?: Learner;
  /** The real system prompt. Default: none. */
  readonly systemPrompt?: string;
  /** The real tool list. Default: none. */
  readonly tools?: readonly ToolDefinition[];
  /** Remember things automatically; when false, whatever is learned waits for an OK. Default true. */
  readonly autoRemember?: boolean;
  /** The provider's model list, when the host has it. Default: `provider.listModels()`, once. */
  readonly models?: readonly ModelInfo[];
  /** A provider with its own compaction (Claude Code's /compact) takes manual folds over. Default: none. */
  readonly handOverCompaction?: (chatId: string, keep: string | undefined) => Promise<boolean>;
  /** Default `api`. */
  readonly id?: string;
  /** Default: the provider's name. */
  readonly displayName?: string;
  /** The clock. Default `Date.now`. */
  readonly now?: () => number;
}

/** The API engine: an {@link Engine} that keeps the transcript and declares the `context` capability. */
export interface ApiEngine extends Engine {
  readonly capabilities: { readonly context: ContextCapability };
  /** The chat's model now. */
  readonly model: string;
  /** Talks to another model from the next turn on (a too-long card's "Switch to …"). */
  setModel(modelId: string): void;
  /** The provider's models as last listed (empty until listed). */
  listModels(): Promise<readonly ModelInfo[]>;
}

/** How long a model list may take before the turn goes on with default windows. */
const modelListTimeoutMs = 20_000;
/** How long after a failed model list it is asked for again. */
const modelListRetryMs = 60_000;

/** The same message of an append-only log, read twice: the copy already held (its estimates cached), if any. */
function sameMessage(held: ChatMessage | undefined, read: ChatMessage): ChatMessage | undefined {
  return held && held.seq === read.seq && held.role === read.role && held.createdAt === read.createdAt
    ? held
    : undefined;
}

/**
 * The engine that keeps the transcript for a model API (ADR 0055): every turn it fits the chat into the
 * model's real window, folds whole turns from the front into a summary written by the cheapest model,
 * heals a "too long" refusal by itself, and lets the host learn the person's words before they are folded.
 */
export function createApiEngine(options: ApiEngineOptions): ApiEngine {
  const { provider, store } = options;
  const now = options.now ?? Date.now;
  const events = createFanOut<EngineEvent>();
  const emit = events.emit;
  /** Turns, folds on request and learning writes of a chat run one after another. */
  const runner = createTurnRunner({ emit });
  const chats = new Map<string, Promise<ChatRuntime>>();
  let model = options.model;
  let models: readonly ModelInfo[] | null = options.models ?? null;
  let noteCounter = 0;

  let listFailedAt = Number.NEGATIVE_INFINITY;
  async function listModels(): Promise<readonly ModelInfo[]> {
    if (models !== null) return models;
    // A provider that could not list its models is asked again after a minute, not before every turn.
    if (now() - listFailedAt < modelListRetryMs) return [];
    try {
      models = await provider.listModels({ timeoutMs: modelListTimeoutMs });
    } catch (error) {
      if (isAbortError(error)) throw error;
      // Unknown windows fall back to the defaults meanwhile.
      listFailedAt = now();
      return [];
    }
    return models;
  }

  function modelInfo(list: readonly ModelInfo[], id: string): ModelInfo {
    return (
      list.find((candidate) => candidate.id === id) ?? {
        id,
        displayName: id,
        ready: true,
        local: provider.local,
        provider: provider.provider,
      }
    );
  }

  function addNote(rt: ChatRuntime, kind: HealthNote["kind"], text: string): HealthNote {
    noteCounter += 1;
    const note: HealthNote = {
      id: `${rt.chatId}-${now()}-${noteCounter}`,
      chatId: rt.chatId,
      kind,
      text,
      at: now(),
      provider: provider.provider,
      model,
    };
    rt.healthNotes = [note, ...rt.healthNotes].slice(0, healthNotesKept);
    return note;
  }

  async function loadRuntime(chatId: string, previous?: ChatRuntime): Promise<ChatRuntime> {
    // A chat read again keeps its estimates: the log only grows, so its old messages are still its messages.
    const rt = emptyChatRuntime(chatId, previous?.cache);
    try {
      rt.log = await store.readLog(chatId);
    } catch (error) {
      // A log torn by a crash is repaired once (its whole copy kept aside); say so and read it again.
      if (!ChatLogCorruptError.isInstance(error) || !error.repaired) throw error;
      addNote(rt, "summary-failed", `The chat's log was cut off by a crash; a copy was kept at ${error.keptAt}.`);
      rt.log = await store.readLog(chatId);
    }
    if (previous) rt.log = rt.log.map((message, index) => sameMessage(previous.log[index], message) ?? message);
    let file: TranscriptFile | null = null;
    try {
      file = await store.readTranscript(chatId);
    } catch (error) {
      if (!TranscriptCorruptError.isInstance(error)) throw error;
      // The unreadable file was kept aside; the chat goes on from its log, without the summary.
      addNote(
        rt,
        "summary-failed",
        `The chat's transcript could not be read (${error.reason}); it was kept at ${error.keptAt}.`,
      );
    }
    const unusable = file ? applyTranscript(rt, file, model) : null;
    if (unusable !== null) {
      // The engine's own fields are bad: the file is not used (its summary neither); the next save replaces it.
      const error = new TranscriptFieldsInvalidError(chatId, unusable);
      addNote(
        rt,
        "summary-failed",
        `The chat's transcript could not be used (${error.reason}); the chat goes on from its log.`,
      );
    }
    if (previous) {
      // Notes not saved yet (a repair said at the last read) stay.
      const known = new Set(rt.healthNotes.map((note) => note.id));
      const unsaved = previous.healthNotes.filter((note) => !known.has(note.id));
      rt.healthNotes = [...unsaved, ...rt.healthNotes].sort((a, b) => b.at - a.at).slice(0, healthNotesKept);
    }
    return rt;
  }

  function runtime(chatId: string): Promise<ChatRuntime> {
    assertSafeChatId(chatId);
    let loaded = chats.get(chatId);
    if (!loaded) {
      loaded = loadRuntime(chatId);
      chats.set(chatId, loaded);
      // A failed load is tried again next time, not cached.
      loaded.catch(() => chats.delete(chatId));
    }
    return loaded;
  }

  /** Reads the chat from the store again: another engine over the same store (another tab) may have written. */
  async function reloadRuntime(chatId: string): Promise<ChatRuntime> {
    const previous = await chats.get(chatId)?.catch(() => undefined);
    const loaded = loadRuntime(chatId, previous);
    chats.set(chatId, loaded);
    loaded.catch(() => chats.delete(chatId));
    return loaded;
  }

  /**
   * Accepts the turn against the chat's log and adds its opening message. A seq that does not follow the log
   * (here or in the store) may mean another engine over the same store wrote since this one read: read the
   * chat again and check once more, so that the `TurnSequenceError` that stands names the real next seq.
   */
  async function acceptTurn(input: Turn["input"]): Promise<{ rt: ChatRuntime; opened: OpenedTurn }> {
    let rt = await runtime(input.chatId);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const opened = openTurn(input, rt.log, now);
        if (!opened.retrying) {
          await store.appendLog(input.chatId, [opened.message]);
          rt.log.push(opened.message);
        }
        return { rt, opened };
      } catch (error) {
        if (!TurnSequenceError.isInstance(error) || attempt > 0) throw error;
        rt = await reloadRuntime(input.chatId);
      }
    }
  }

  async function saveTranscript(rt: ChatRuntime, kept: readonly ChatMessage[]): Promise<void> {
    const fields = engineFields(rt);
    // The engine's own fields ride on `previous`, which buildTranscriptFile carries over.
    const file = buildTranscriptFile({
      id: rt.chatId,
      kept,
      previous: { ...rt.file, ...fields } as TranscriptFile,
      model,
      updatedAt: now(),
      ...(rt.summary ? { summary: rt.summary } : {}),
      ...(rt.factor ? { factor: rt.factor.factor } : {}),
    });
    await store.writeTranscript(rt.chatId, file);
    rt.file = file;
  }

  interface Sizing {
    readonly modelId: string;
    readonly info: ModelInfo;
    readonly family: string | undefined;
    readonly factor: number;
    readonly systemTokens: number;
    readonly toolTokens: number;
    readonly budget: Budget;
  }

  // The system prompt and the tool list never change: estimate them once per tokenizer family.
  const fixedTokensByFamily = new Map<string | undefined, { systemTokens: number; toolTokens: number }>();
  function fixedTokens(family: string | undefined): { systemTokens: number; toolTokens: number } {
    let fixed = fixedTokensByFamily.get(family);
    if (!fixed) {
      fixed = {
        systemTokens: options.systemPrompt ? estimateTokens(options.systemPrompt, family) : 0,
        toolTokens: options.tools?.length ? estimateTokens(JSON.stringify(options.tools), family) : 0,
      };
      fixedTokensByFamily.set(family, fixed);
    }
    return fixed;
  }

  /** Sizes the next request; `refusedWindow` is the window a refusal just named (used as is, not looked up again). */
  async function sizing(rt: ChatRuntime, refusedWindow?: number): Promise<Sizing> {
    const list = await listModels();
    const info = modelInfo(list, model);
    const family = modelFamily(model);
    const stored = provider.windows.get(provider.provider, model);
    const remembered = Math.min(stored ?? Number.POSITIVE_INFINITY, refusedWindow ?? Number.POSITIVE_INFINITY);
    const { window } = resolveWindow({
      model: info,
      remembered: Number.isFinite(remembered) ? remembered : null,
      local: provider.local,
    });
    const factor = factorForModel(rt.factor, model);
    const { systemTokens, toolTokens } = fixedTokens(family);
    const answerRoom = rt.answerRooms[model];
    const budget = computeBudget({
      window,
      systemTokens,
      toolTokens,
      factor,
      ...(answerRoom !== undefined ? { answerRoom } : {}),
    });
    return { modelId: model, info, family, factor, systemTokens, toolTokens, budget };
  }

  function plan(rt: ChatRuntime, size: Sizing, mode: FoldMode): FoldPlan {
    return planFold({
      messages: rt.log,
      summary: rt.summary?.text ?? null,
      budget: size.budget.budget,
      mode,
      previous: rt.fold,
      family: size.family,
      factor: size.factor,
      cache: rt.cache,
    });
  }

  /**
   * Plans the next request and applies it: folds (summarising) when the plan folds, else keeps its state
   * (a new text limit). Returns the plan and the summariser's usage.
   */
  async function planAndFold(
    rt: ChatRuntime,
    size: Sizing,
    mode: FoldMode,
    abortSignal: AbortSignal | undefined,
    send: (event: EngineEvent) => void,
  ): Promise<{ planned: FoldPlan; usage: Usage }> {
    const planned = plan(rt, size, mode);
    const reason = mode === "heal" ? "too-long" : planned.reason;
    if (!planned.fold || reason === null) {
      rt.fold = planned.state;
      return { planned, usage: emptyUsage };
    }
    return { planned, usage: await applyFold(rt, planned, size, reason, undefined, abortSignal, send) };
  }

  function usageOf(size: Sizing, planned: FoldPlan): ContextUsage {
    const usedTokens = Math.ceil((size.systemTokens + size.toolTokens) * size.factor + planned.tokens);
    const window = size.budget.window;
    return {
      usedTokens,
      window,
      budget: size.budget.budget,
      factor: size.factor,
      share: window > 0 ? usedTokens / window : 1,
    };
  }

  /**
   * Folds what the plan folds: summarises it (the old summary stays when no model writes one), saves the
   * transcript, says so, and lets the learner read the person's words before the fold, alongside.
   * Throws the AbortError when aborted, leaving the chat as it was.
   */
  async function applyFold(
    rt: ChatRuntime,
    planned: FoldPlan,
    size: Sizing,
    reason: CompactionReason,
    keep: string | undefined,
    abortSignal: AbortSignal | undefined,
    send: (event: EngineEvent) => void,
  ): Promise<Usage> {
    send({ type: "compacting", chatId: rt.chatId, reason });
    let result: Awaited<ReturnType<typeof summariseFolded>>;
    try {
      result = await summariseFolded({
        provider,
        chatModel: size.modelId,
        models: await listModels(),
        folded: planned.folded,
        previousSummary: rt.summary?.text ?? null,
        ...(keep ? { keep } : {}),
        budget: size.budget.budget,
        ...(abortSignal ? { abortSignal } : {}),
      });
    } catch (error) {
      // The fold is not applied; say so, so that no "Summarising…" is left standing.
      if (isAbortError(error)) send({ type: "compaction-skipped", chatId: rt.chatId, reason, why: "aborted" });
      throw error;
    }
    let text = rt.summary?.text ?? "";
    let writer: string | null = rt.summary?.model ?? null;
    let writerName: string | undefined = rt.summary?.modelName;
    if (result.status === "summarised") {
      text = result.text;
      writer = result.model;
      writerName = (await listModels()).find((candidate) => candidate.id === result.model)?.displayName;
    } else {
      const why = result.attempts.map((attempt) => `${attempt.model}: ${attempt.rejection}`).join(", ");
      const note = addNote(
        rt,
        "summary-failed",
        `No model wrote a summary (${why || "no model"}); the earliest turns were dropped and the previous summary stays.`,
      );
      send({ type: "health-note", chatId: rt.chatId, note });
    }
    const summaryTokens = text ? estimateTokens(text, size.family) : 0;
    const summary: SummaryState = {
      text,
      model: writer,
      ...(writerName ? { modelName: writerName } : {}),
      firstKeptSeq: planned.firstKeptSeq,
      reason,
      before: planned.before,
      folded: {
        messages: (rt.summary?.folded?.messages ?? 0) + planned.folded.length,
        tokens:
          (rt.summary?.folded?.tokens ?? 0) +
          Math.ceil(estimateMessagesTokens(planned.folded, size.family, rt.cache) * size.factor),
      },
      after: {
        messages: planned.after.messages,
        tokens: Math.ceil(
          planned.tokens -
            (rt.summary ? estimateTokens(rt.summary.text, size.family) * size.factor : 0) +
            summaryTokens * size.factor,
        ),
      },
      at: now(),
    };
    rt.summary = summary;
    rt.fold = planned.state;
    await saveTranscript(rt, planned.kept);
    send({ type: "compacted", chatId: rt.chatId, ...summary });
    startLearning(rt, planned.firstKeptSeq);
    return result.usage;
  }

  function startLearning(rt: ChatRuntime, untilSeq: number): void {
    const learner = options.learner;
    if (!learner) return;
    const current = chats.get(rt.chatId);
    // Alongside the turn, never in its way: the words are still in the log if this is slow or fails.
    void learnBeforeFold({
      learner,
      chatId: rt.chatId,
      log: [...rt.log],
      state: rt.learning,
      untilSeq,
      origin: rt.origin,
      untrusted: rt.untrusted,
      autoRemember: options.autoRemember ?? true,
      now,
    })
      .then((result) => {
        if (result.state === rt.learning) return;
        // Later folds may have read further meanwhile; never move readUntil back.
        if (result.state.readUntil <= rt.learning.readUntil) return;
        rt.learning = result.state;
        // A chat read again since keeps its own state; the words are read again at its next fold.
        if (chats.get(rt.chatId) !== current) return;
        return runner.queued(rt.chatId, () => saveTranscript(rt, keptFromLog(rt)));
      })
      .catch((error: unknown) => console.error(error));
  }

  /** The too-long problem with its one next step: a ready model that reads enough more, else a new chat. */
  function tooLongWithNextStep(
    list: readonly ModelInfo[],
    size: Sizing,
    neededTokens: number,
    message: string,
    providerMessage?: string,
    tokens?: { readonly counted?: number | undefined; readonly estimated: number },
  ): TurnProblem {
    const window = size.budget.window;
    const bigger = list
      .filter(
        (candidate) =>
          candidate.ready &&
          candidate.id !== size.modelId &&
          candidate.context !== undefined &&
          candidate.context >= window * 1.5 &&
          windowTakes(candidate.context, neededTokens),
      )
      .sort((a, b) => (b.context ?? 0) - (a.context ?? 0))[0];
    const base = {
      kind: "too-long" as const,
      title: defaultProblemTitle("too-long"),
      window,
      ...(providerMessage ? { providerMessage } : {}),
      ...(tokens?.counted !== undefined ? { countedTokens: tokens.counted } : {}),
      ...(tokens ? { estimatedTokens: tokens.estimated } : {}),
    };
    if (bigger) {
      return {
        ...base,
        next: {
          type: "switch-model",
          model: bigger,
          readsTimes: Math.round(((bigger.context ?? window) / window) * 10) / 10,
        },
      };
    }
    return { ...base, next: { type: "new-chat", message } };
  }

  async function runTurn(turn: Turn): Promise<EngineEventOf<"turn-end">> {
    const { input, chatId, send } = turn;
    const signal = input.abortSignal;
    const { rt, opened } = await acceptTurn(input);
    if (input.untrusted) rt.untrusted = true;
    if (input.origin) rt.origin = input.origin;
    startTurn(turn, rt, opened.message);

    let usage = emptyUsage;
    const answer = createAnswer(turn, model);
    let finish: FinishReason | null = null;
    let keptForFile: readonly ChatMessage[] = keptFromLog(rt);
    // The person's message for a "new chat" next step: the text of the turn's opening person message.
    const turnOpening = rt.log.findLast((message) => message.role === "user");
    const carriedMessage = turnOpening ? messageText(turnOpening) : input.text;
    const ending = {
      save: () => saveTranscript(rt, keptForFile),
      contextUsage: async () => {
        const size = await sizing(rt);
        return usageOf(size, plan(rt, size, "auto"));
      },
    };
    const end = (status: EngineEventOf<"turn-end">["status"]) => endTurn(turn, rt, status, usage, ending);
    const problem = (turnProblem: TurnProblem) => failTurn(turn, rt, turnProblem, usage, ending);

    const keepPartial = async () => {
      if (answer.parts.length === 0) return;
      const message = answer.message(now());
      await store.appendLog(chatId, [message]);
      rt.log.push(message);
      keptForFile = [...keptForFile, message];
      answer.end(message, "aborted");
    };

    try {
      if (signal?.aborted) throw abortReason(signal);
      let size = await sizing(rt);
      if (size.budget.uncapped <= 0) {
        // The system prompt and tools alone fill the window: no fold can help, and none is tried.
        return await problem(
          tooLongWithNextStep(
            await listModels(),
            size,
            Math.ceil((size.systemTokens + size.toolTokens) * size.factor * 1.2),
            carriedMessage,
            "The system prompt and the tool list alone fill this model's window.",
          ),
        );
      }
      let { planned, usage: foldUsage } = await planAndFold(rt, size, "auto", signal, send);
      usage = addUsage(usage, foldUsage);

      let healed = false;
      let healedWindow: number | null = null;
      for (;;) {
        const requestMessages = buildRequestMessages(planned.kept, rt.summary?.text || null);
        keptForFile = planned.kept;
        let turnStartIndex = requestMessages.length - 1;
        while (turnStartIndex >= 0 && requestMessages[turnStartIndex]?.role !== "user") turnStartIndex -= 1;
        const estimatedRequest = size.systemTokens + size.toolTokens + planned.tokens / size.factor;
        try {
          const stream = provider.streamChat({
            model: size.modelId,
            ...(options.systemPrompt ? { system: options.systemPrompt } : {}),
            messages: requestMessages,
            ...(options.tools?.length ? { tools: options.tools } : {}),
            maxOutputTokens: size.budget.answerRoom,
            contextWindow: size.budget.window,
            ...(turnStartIndex > 0 ? { cacheBreakpointIndex: turnStartIndex - 1 } : {}),
            ...(signal ? { abortSignal: signal } : {}),
          });
          for await (const part of stream) {
            switch (part.type) {
              case "text-delta":
                answer.text(part.delta);
                break;
              case "thinking-delta":
                answer.thinking(part.delta, {
                  ...(part.signature ? { signature: part.signature } : {}),
                  ...(part.redacted ? { redacted: true } : {}),
                });
                break;
              case "tool-call":
                answer.toolCall(part);
                break;
              case "usage": {
                usage = addUsage(usage, part.usage);
                const raised = raiseFactor(size.factor, part.usage.inputTokens, estimatedRequest);
                rt.factor = { modelId: size.modelId, factor: raised };
                send({ type: "usage", chatId, usage });
                break;
              }
              case "finish":
                finish = part.reason;
                break;
              default:
                part satisfies never;
            }
          }
          if (healed) {
            const note = addNote(
              rt,
              "healed",
              `${size.info.displayName} refused the request as too long${healedWindow ? ` (its window is ${healedWindow} tokens)` : ""}; it was shortened and sent again.`,
            );
            send({
              type: "healed",
              chatId,
              seq: input.seq,
              provider: provider.provider,
              model: size.modelId,
              ...(healedWindow ? { window: healedWindow } : {}),
            });
            send({ type: "health-note", chatId, note });
          }
          break;
        } catch (error) {
          if (isAbortError(error)) throw error;
          if (!ProviderCallError.isInstance(error)) throw error;
          const refusal = error.tooLong;
          if (refusal === null || error.afterOutput || answer.started) {
            // A refusal after words have arrived is not retried: what was written stays.
            await keepPartial();
            return await problem(error.problem);
          }
          if (healed) {
            const list = await listModels();
            const neededTokens = Math.ceil(estimatedRequest * size.factor) + size.budget.answerRoom;
            return await problem(
              tooLongWithNextStep(
                list,
                size,
                neededTokens,
                carriedMessage,
                error.problem.providerMessage ?? error.message,
                { counted: refusal.inputTokens, estimated: Math.ceil(estimatedRequest * size.factor) },
              ),
            );
          }
          healed = true;
          // The refusal named the window: size again with it.
          if (refusal.cause === "output") {
            const usedWindow = size.budget.window;
            size = await sizing(rt, refusal.window);
            // A window smaller than the one planned with is news enough: its own answer room applies.
            // Only when the window was right is the answer room itself too big for this request.
            if (size.budget.window >= usedWindow) {
              const window = refusal.window ?? usedWindow;
              const inputTokens = refusal.inputTokens ?? Math.ceil(estimatedRequest * size.factor);
              const lowered = Math.max(
                256,
                Math.min(Math.floor(size.budget.answerRoom / 2), window - inputTokens - 64),
              );
              rt.answerRooms[size.modelId] = lowered;
              size = await sizing(rt, refusal.window);
            }
            ({ planned, usage: foldUsage } = await planAndFold(rt, size, "auto", signal, send));
          } else {
            size = await sizing(rt, refusal.window);
            if (refusal.inputTokens !== undefined && refusal.window === undefined) {
              // The refusal named what was sent but no window: the estimate was short; raise the factor.
              rt.factor = {
                modelId: size.modelId,
                factor: raiseFactor(size.factor, refusal.inputTokens, estimatedRequest),
              };
              size = await sizing(rt, refusal.window);
            }
            ({ planned, usage: foldUsage } = await planAndFold(rt, size, "heal", signal, send));
          }
          usage = addUsage(usage, foldUsage);
          healedWindow = refusal.window ?? null;
        }
      }

      const message = answer.message(now());
      await store.appendLog(chatId, [message]);
      rt.log.push(message);
      keptForFile = [...keptForFile, message];
      const finishReason = finish === "tool-calls" ? "tool-calls" : finish === "length" ? "length" : "stop";
      answer.end(message, finishReason);
      return await end(finish === "tool-calls" ? "tool-calls" : "done");
    } catch (error) {
      if (!isAbortError(error)) throw error;
      // What was written stays in the log, marked as cut short; the transcript stays consistent.
      await keepPartial();
      return await end("aborted");
    }
  }

  const context: ContextCapability = {
    async compact(chatId: string, compactOptions: CompactOptions = {}): Promise<CompactResult> {
      const rt = await runtime(chatId);
      return runner.queued(chatId, async () => {
        if (options.handOverCompaction && (await options.handOverCompaction(chatId, compactOptions.keep))) {
          emit({ type: "compaction-skipped", chatId, reason: "manual", why: "handed-over" });
          return { status: "handed-over" };
        }
        const size = await sizing(rt);
        const planned = plan(rt, size, "manual");
        if (!planned.fold) {
          emit({ type: "compaction-skipped", chatId, reason: "manual", why: "nothing-to-fold" });
          return { status: "nothing-to-fold" };
        }
        try {
          const used = await applyFold(
            rt,
            planned,
            size,
            "manual",
            compactOptions.keep,
            compactOptions.abortSignal,
            emit,
          );
          rt.usage = addUsage(rt.usage, used);
        } catch (error) {
          if (!isAbortError(error)) throw error;
          return { status: "aborted" };
        }
        return { status: "compacted", summary: rt.summary as SummaryState };
      });
    },
    async usage(chatId: string): Promise<ContextUsage> {
      const rt = await runtime(chatId);
      const size = await sizing(rt);
      return usageOf(size, plan(rt, size, "auto"));
    },
  };

  const engine: ApiEngine = {
    specificationVersion: "v1",
    id: options.id ?? "api",
    displayName: options.displayName ?? provider.provider,
    capabilities: { context },
    get model() {
      return model;
    },
    setModel(modelId: string) {
      model = modelId;
    },
    listModels,

    async loadChat(chatId): Promise<ChatSnapshot> {
      assertSafeChatId(chatId);
      // Read from the store each time (another engine over it may have written), unless a turn runs here.
      const rt = runner.isBusy(chatId)
        ? await runtime(chatId)
        : await runner.queued(chatId, () => reloadRuntime(chatId));
      const size = await sizing(rt);
      return {
        chatId,
        messages: [...rt.log],
        summary: rt.summary,
        healthNotes: [...rt.healthNotes],
        model: size.info,
        contextUsage: usageOf(size, plan(rt, size, "auto")),
        problem: rt.problem,
        usage: rt.usage,
      };
    },

    subscribe: events.subscribe,
    sendTurn: (input) => runner.start(input, runTurn),
  };
  return engine;
}
