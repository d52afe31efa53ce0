import { estimateTokens } from "../context/estimate.js";
import type { FoldMode, FoldPlan } from "../context/fold.js";
import { estimateMessagesTokens } from "../context/message-estimate.js";
import { isAbortError } from "../errors.js";
import type { CompactionReason, EngineEvent, SummaryState } from "../events.js";
import { problemAfterFold } from "../kit/turn-book.js";
import { learnBeforeFold } from "../learning/learner.js";
import { emptyUsage, type Usage } from "../messages.js";
import { type SummariseResult, summariseFolded, summaryLeftOutNote } from "../summarise/summariser.js";
import type { ChatCache } from "./chat-loading.js";
import { logBetween, savesTurnsWhole, saveTranscript } from "./chat-loading.js";
import { type ChatRuntime, keepEarlierFold, keptFromLog } from "./chat-state.js";
import type { EngineParts } from "./engine-parts.js";
import { planFor, type Sizing } from "./sizing.js";

/** What a fold needs beyond the engine's parts: the chats held, and the per-chat queue for later writes. */
export interface FoldContext {
  readonly parts: EngineParts;
  readonly chats: ChatCache;
  readonly queued: <T>(chatId: string, work: () => Promise<T>) => Promise<T>;
}

/**
 * The fold-and-summary decision: plans the next request and folds (summarising) when the plan folds, else
 * keeps the plan's state (a new text limit). A `heal` fold folds because the provider refused. Returns the
 * plan and the summariser's usage.
 */
export async function planAndFold(
  context: FoldContext,
  rt: ChatRuntime,
  size: Sizing,
  mode: FoldMode,
  abortSignal: AbortSignal | undefined,
  send: (event: EngineEvent) => void,
): Promise<{ planned: FoldPlan; usage: Usage }> {
  const planned = planFor(rt, size, mode);
  const reason = mode === "heal" ? "too-long" : planned.reason;
  if (!planned.fold || reason === null) {
    rt.fold = planned.state;
    return { planned, usage: emptyUsage };
  }
  const folded = await applyFold(context, { rt, planned, size, reason, abortSignal, send });
  return { planned, usage: folded.usage };
}

/** The time limit of a fold when the host sets none (`foldTimeLimitMs`). */
export const defaultFoldTimeLimitMs = 300_000;

/** What {@link applyFold} did: folded (with or without a summary), or nothing (a fold on request with no summary). */
export interface FoldOutcome {
  readonly usage: Usage;
  readonly applied: boolean;
}

/** One fold to apply. */
export interface FoldInput {
  readonly rt: ChatRuntime;
  readonly planned: FoldPlan;
  readonly size: Sizing;
  readonly reason: CompactionReason;
  /** What the person asked the summary to keep (a manual fold). */
  readonly keep?: string | undefined;
  readonly abortSignal: AbortSignal | undefined;
  readonly send: (event: EngineEvent) => void;
  /**
   * When no model writes a summary: the plan to fold without one, or null to fold nothing. Default: the same plan
   * (a fold that must happen drops its turns, as the ADR allows).
   */
  readonly withoutSummary?: () => FoldPlan | null;
  /** The active branch's last message when the fold was planned (a fold ahead's, from before). Default: now. */
  readonly foldedAt?: number;
}

/** What the summariser gave a fold: its result, and whether the fold's time limit ended it. */
export interface FoldSummary {
  readonly result: SummariseResult;
  readonly timedOut: boolean;
  readonly limitMs: number;
}

/**
 * Folds what the plan folds: summarises it (within the fold's time limit), saves the transcript, says so, and
 * lets the learner read the person's words before the fold, alongside. With no summary (no model wrote one, or
 * time ran out) it folds what `withoutSummary` says, marked unsummarised (the old summary's text stays), or
 * nothing. Throws the AbortError when aborted, leaving the chat as it was.
 */
export async function applyFold(context: FoldContext, input: FoldInput): Promise<FoldOutcome> {
  return commitFold(context, input, await summariseFold(context, input));
}

/**
 * The first half of a fold, which changes nothing: says `compacting`, and has the summariser write the summary of
 * what the plan folds, within the fold's time limit (past it, the result is a failure). Throws the AbortError
 * when aborted, after saying `compaction-skipped`.
 */
export async function summariseFold(context: FoldContext, input: FoldInput): Promise<FoldSummary> {
  const { parts } = context;
  const { rt, size, reason, keep, abortSignal, send, planned } = input;
  const firstKeptSeq = planned.firstKeptSeq;
  send({ type: "compacting", chatId: rt.chatId, reason, firstKeptSeq });
  const limitMs = parts.options.foldTimeLimitMs ?? defaultFoldTimeLimitMs;
  const timeLimit = new AbortController();
  const timer = setTimeout(
    () => timeLimit.abort(new DOMException(`The fold took over ${limitMs} ms`, "TimeoutError")),
    limitMs,
  );
  // Let it out (to the turn's stream, a server's socket) before the summariser sizes its pieces, which holds the
  // thread for a while on a long fold: the person sees the fold begin, not a silence.
  await new Promise((resolve) => setTimeout(resolve, 0));
  try {
    const result = await summariseFolded({
      provider: parts.provider,
      chatModel: size.modelId,
      models: await parts.listModels(),
      folded: planned.folded,
      previousSummary: rt.summary?.text ?? null,
      ...(keep ? { keep } : {}),
      budget: size.budget.budget,
      factor: size.factor,
      abortSignal: abortSignal ? AbortSignal.any([abortSignal, timeLimit.signal]) : timeLimit.signal,
      onPiece: (piece, pieces) => send({ type: "compacting", chatId: rt.chatId, reason, firstKeptSeq, piece, pieces }),
    });
    return { result, timedOut: false, limitMs };
  } catch (error) {
    if (!(timeLimit.signal.aborted && !abortSignal?.aborted && isAbortError(error))) {
      // The fold is not applied; say so, so that no "Summarising…" is left standing.
      if (isAbortError(error)) send({ type: "compaction-skipped", chatId: rt.chatId, reason, why: "aborted" });
      throw error;
    }
    // Past the time limit: as when no model gives a summary.
    const result = { status: "failed", usage: emptyUsage, requests: 0, attempts: [], leftOutCharacters: 0 } as const;
    return { result, timedOut: true, limitMs };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The second half of a fold: applies what the summariser gave (see {@link applyFold}). `save` writes the
 * transcript now even when the store writes turns whole (a fold outside a turn: no answer carries it).
 */
export async function commitFold(
  context: FoldContext,
  input: FoldInput,
  summary: FoldSummary,
  save = false,
): Promise<FoldOutcome> {
  const { parts } = context;
  const { rt, size, reason, send } = input;
  const { result, timedOut, limitMs } = summary;
  let planned = input.planned;
  let text = rt.summary?.text ?? "";
  let writer: string | null = rt.summary?.model ?? null;
  let writerName: string | undefined = rt.summary?.modelName;
  if (result.status === "summarised") {
    text = result.text;
    writer = result.model;
    writerName = (await parts.listModels()).find((candidate) => candidate.id === result.model)?.displayName;
  } else {
    const why = timedOut
      ? `it took over ${Math.round(limitMs / 1000)} s`
      : result.attempts.map((attempt) => `${attempt.model}: ${attempt.rejection}`).join(", ") || "no model";
    const instead = input.withoutSummary ? input.withoutSummary() : planned;
    const note = parts.addNote(
      rt,
      "summary-failed",
      instead
        ? `No model wrote a summary (${why}); the earliest turns were dropped unsummarised and the previous summary stays.`
        : `No model wrote a summary (${why}); nothing was dropped.`,
    );
    send({ type: "health-note", chatId: rt.chatId, note });
    if (!instead) {
      send({ type: "compaction-skipped", chatId: rt.chatId, reason, why: "no-summary" });
      return { usage: result.usage, applied: false };
    }
    planned = instead;
    // The divider marks a fold no model summarised: no writer stands behind what it holds.
    writer = null;
    writerName = undefined;
  }
  // One note a fold: a fold no model summarised says so above, and nothing of texts no summary was written from.
  if (result.status === "summarised" && result.leftOutCharacters > 0) {
    const note = parts.addNote(rt, "summary-shortened", summaryLeftOutNote(result.leftOutCharacters));
    send({ type: "health-note", chatId: rt.chatId, note });
  }
  const summaryState = summaryAfterFold(rt, planned, size, { text, writer, writerName, reason, at: parts.now() });
  // The fold this one replaces stays a while, for a branch that forks between the two.
  keepEarlierFold(rt);
  rt.summary = summaryState;
  rt.foldedAt = input.foldedAt ?? rt.leaf;
  rt.fold = planned.state;
  // The fold answers a standing too-long card: cleared here, so that a reload does not bring it back. A turn's fold
  // is written with its answer when the store writes turns whole (or as the turn ends, if none).
  rt.problem = problemAfterFold(rt.problem);
  if (save || reason === "manual" || !savesTurnsWhole(parts)) await saveTranscript(parts, rt, planned.kept);
  send({ type: "compacted", chatId: rt.chatId, ...summaryState });
  startLearning(context, rt, planned.firstKeptSeq);
  return { usage: result.usage, applied: true };
}

/** The summary state after a fold: what was folded so far, and what the request holds after it. */
function summaryAfterFold(
  rt: ChatRuntime,
  planned: FoldPlan,
  size: Sizing,
  written: {
    readonly text: string;
    readonly writer: string | null;
    readonly writerName: string | undefined;
    readonly reason: CompactionReason;
    readonly at: number;
  },
): SummaryState {
  const summaryTokens = written.text ? estimateTokens(written.text, size.family) : 0;
  return {
    text: written.text,
    model: written.writer,
    ...(written.writerName ? { modelName: written.writerName } : {}),
    firstKeptSeq: planned.firstKeptSeq,
    reason: written.reason,
    before: planned.before,
    folded: {
      messages: (rt.summary?.folded?.messages ?? 0) + planned.folded.length,
      tokens:
        (rt.summary?.folded?.tokens ?? 0) +
        Math.ceil(estimateMessagesTokens(planned.folded, size.family, rt.cache) * size.factor),
    },
    after: {
      messages: planned.after.messages,
      // Never below the summary's own size: the plan's figure may leave out a previous summary it replaces.
      tokens: Math.max(
        Math.ceil(summaryTokens * size.factor),
        Math.ceil(
          planned.tokens -
            (rt.summary ? estimateTokens(rt.summary.text, size.family) * size.factor : 0) +
            summaryTokens * size.factor,
        ),
      ),
    },
    at: written.at,
  };
}

/** The learner reads the person's words before `untilSeq`, alongside the turn, never in its way. */
function startLearning(context: FoldContext, rt: ChatRuntime, untilSeq: number): void {
  const { parts, chats } = context;
  const learner = parts.options.learner;
  if (!learner) return;
  const { chatId } = rt;
  const reading = chats.reading(chatId);
  const held = [...rt.log];
  const state = rt.learning;
  // The person's words since the learner last read: the log held starts at the kept part, so words the learner
  // has not read before it (an answer it never gave) are read from the store. They are still in the log if this
  // is slow or fails.
  const heldFrom = held[0]?.seq ?? untilSeq;
  void logBetween(parts, rt, state.readUntil, Math.min(heldFrom, untilSeq))
    .then((earlier) =>
      learnBeforeFold({
        learner,
        chatId,
        log: [...earlier, ...held],
        state,
        untilSeq,
        origin: rt.origin,
        untrusted: rt.untrusted,
        autoRemember: parts.options.autoRemember ?? true,
        now: parts.now,
      }),
    )
    .then((result) => {
      if (result.outcome.status === "failed") parts.onError(result.outcome.error, { during: "learner", chatId });
      if (result.state === rt.learning) return;
      // Later folds may have read further meanwhile; never move readUntil back.
      if (result.state.readUntil <= rt.learning.readUntil) return;
      rt.learning = result.state;
      // A chat read again since keeps its own state; the words are read again at its next fold.
      if (chats.reading(chatId) !== reading) return;
      return context
        .queued(chatId, () => saveTranscript(parts, rt, keptFromLog(rt)))
        .catch((error: unknown) => parts.onError(error, { during: "save", chatId }));
    })
    .catch((error: unknown) => parts.onError(error, { during: "learner", chatId }));
}
