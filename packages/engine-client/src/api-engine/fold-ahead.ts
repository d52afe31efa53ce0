import type { FoldPlan } from "../context/fold.js";
import { measureMessage } from "../context/message-estimate.js";
import { isAbortError } from "../errors.js";
import type { CompactionReason, EngineEvent, EngineEventOf } from "../events.js";
import type { Turn } from "../kit/turn-runner.js";
import { addUsage, type ChatMessage, emptyUsage, messageText, type Usage } from "../messages.js";
import { isOnPath } from "../transcript/branch-tree.js";
import type { ChatRuntime } from "./chat-state.js";
import { commitFold, type FoldContext, type FoldInput, type FoldSummary, summariseFold } from "./fold-step.js";
import { planFor, type Sizing } from "./sizing.js";

/** How many of the person's latest messages give the chat's usual message size. */
const usualOf = 9;

/**
 * A message of the chat's usual size, as the person's next one: the median by length of the person's latest
 * messages, given the next seq. Null when the person has written nothing yet.
 */
export function usualNextMessage(log: readonly ChatMessage[]): ChatMessage | null {
  const theirs: ChatMessage[] = [];
  for (let index = log.length - 1; index >= 0 && theirs.length < usualOf; index--) {
    const message = log[index] as ChatMessage;
    if (message.role === "user") theirs.push(message);
  }
  const last = log.at(-1);
  if (theirs.length === 0 || !last) return null;
  const byLength = theirs.sort((a, b) => messageText(a).length - messageText(b).length);
  const usual = byLength[byLength.length >> 1] as ChatMessage;
  // A new object: the estimate cache is per message object, so the real next message is counted on its own.
  return { ...usual, seq: last.seq + 1 };
}

/**
 * The fold the next turn would make if the person wrote a message of the usual size (today's rule, `auto`), as
 * it applies to the chat as it stands: what it keeps without that message. Null when that turn would not fold.
 */
export function planFoldAhead(rt: ChatRuntime, size: Sizing): FoldPlan | null {
  const next = usualNextMessage(rt.log);
  if (!next) return null;
  const plan = planFor(rt, size, "auto", [...rt.log, next]);
  if (!plan.fold || plan.reason === null) return null;
  const nextTokens = Math.ceil(measureMessage(next, size.family, rt.cache).tokens * size.factor);
  const kept = plan.kept.filter((message) => message.seq < next.seq);
  // A limit set for the imagined message is not kept: the real one is planned on its own.
  const textLimit = plan.state.textLimit?.turnSeq === next.seq ? null : plan.state.textLimit;
  return {
    ...plan,
    kept,
    state: { firstKeptSeq: plan.state.firstKeptSeq, textLimit },
    tokens: Math.max(0, plan.tokens - nextTokens),
    after: { messages: kept.length, tokens: Math.max(0, plan.after.tokens - nextTokens) },
  };
}

/** What a fold ahead folds from: the chat must still be there when it is applied. */
interface FoldBase {
  readonly summaryText: string | null;
  readonly firstKeptSeq: number;
  /** The seq after the log's last message when the fold began. */
  readonly nextSeq: number;
  /** The active leaf when the fold began: the fold is that branch's. */
  readonly leaf: number;
}

/** A fold begun after a turn ended, ahead of the turn that will need it. */
interface PendingFold {
  readonly chatId: string;
  readonly base: FoldBase;
  readonly input: FoldInput;
  readonly controller: AbortController;
  /** The summary, or null when the summariser failed, ran out of time, or was stopped. */
  readonly summarised: Promise<FoldSummary | null>;
  /** The turn running meanwhile, whose stream also hears the fold. */
  turn: Turn | null;
  /** The fold's latest `compacting`, for a turn that starts while it runs. */
  lastCompacting: EngineEventOf<"compacting">;
  /** Applied, or dropped: nothing more to do. */
  settled: boolean;
  /** The summariser is done (the fold waits to be applied). */
  written: boolean;
}

/** Folds ahead of the need (after a turn, in the background) and hands the result to whoever needs it first. */
export interface FoldsAhead {
  /**
   * After a turn ended: when the next turn would have to fold, starts that fold now, in the background, unless
   * one runs. `queued` applies its result in the chat's queue once it is written (when no turn took it before).
   * True when a fold ahead runs now (its `compacting` has gone out).
   */
  start(rt: ChatRuntime, size: Sizing): boolean;
  /**
   * A turn begins on the chat: its stream hears a fold ahead applied since the last turn, and a running one. When
   * `mustFold` (the turn cannot fit
   * without a fold), waits for it (or the turn's abort) and applies it. Returns the summariser's usage it applied.
   */
  joinTurn(turn: Turn, rt: ChatRuntime, mustFold: () => boolean, signal: AbortSignal | undefined): Promise<Usage>;
  /** The turn has ended: the fold, if still running, is heard by listeners only. */
  leaveTurn(chatId: string): void;
  /** Stops the chat's fold ahead (a fold on request folds at once); it changes nothing. False when none runs. */
  cancel(chatId: string): boolean;
  /** Whether a fold ahead of the chat runs or waits to be applied. */
  pending(chatId: string): boolean;
}

export function createFoldsAhead(
  context: FoldContext,
  emit: (event: EngineEvent) => void,
  applyInQueue: (chatId: string, apply: (rt: ChatRuntime) => Promise<void>) => void,
): FoldsAhead {
  const { parts } = context;
  const folds = new Map<string, PendingFold>();
  /**
   * A fold ahead applied between two turns, by chat: its `compacted` goes again in the next turn's stream, for a
   * client that hears only its turns' streams (the remote engine between turns), at the turn it changes.
   */
  const landed = new Map<string, EngineEventOf<"compacted">>();

  const nextSeqOf = (rt: ChatRuntime) => rt.tree.nextSeq;

  function drop(fold: PendingFold): void {
    fold.settled = true;
    if (folds.get(fold.chatId) === fold) folds.delete(fold.chatId);
  }

  /**
   * Applies the written summary if the chat is still the one it folded, here and in the store (another engine
   * over the same store may have written since): else drops it, changing nothing. `inTurn`: a turn applies it (its
   * fold is written with its answer), else it is applied in the chat's queue and written now.
   */
  async function apply(fold: PendingFold, rt: ChatRuntime, inTurn: boolean): Promise<Usage> {
    if (fold.settled) return emptyUsage;
    const summary = await fold.summarised;
    if (fold.settled) return emptyUsage;
    drop(fold);
    const send = (event: EngineEvent) => (fold.turn ? fold.turn.send(event) : emit(event));
    const skipped = () =>
      send({ type: "compaction-skipped", chatId: fold.chatId, reason: fold.input.reason, why: "no-summary" });
    if (summary?.result.status !== "summarised") {
      if (summary) skipped();
      return emptyUsage;
    }
    // The chat as held here is the chat as stored (no other engine went on with it), and no fold came since: the
    // folded turns are still the front of what is kept, whatever turns came after them.
    const stored = await parts.store.readChat(fold.chatId, { kept: false });
    const same =
      (rt.summary?.text ?? null) === fold.base.summaryText &&
      rt.fold.firstKeptSeq === fold.base.firstKeptSeq &&
      nextSeqOf(rt) >= fold.base.nextSeq &&
      // A fold ahead belongs to the branch it began on: the chat must still be on it (or have gone on with it).
      isOnPath(rt.tree, rt.leaf, fold.base.leaf) &&
      stored.nextSeq === nextSeqOf(rt) &&
      (stored.transcript?.summary?.text ?? null) === fold.base.summaryText;
    if (!same) {
      skipped();
      return emptyUsage;
    }
    const outside = !inTurn;
    // Outside a turn the chat's usage carries the summariser's; in a turn, the turn's usage does.
    if (outside) rt.usage = addUsage(rt.usage, summary.result.usage);
    const firstKeptSeq = fold.input.planned.state.firstKeptSeq;
    const planned = { ...fold.input.planned, kept: rt.log.filter((message) => message.seq >= firstKeptSeq) };
    const sendAndKeep = (event: EngineEvent) => {
      if (outside && event.type === "compacted") landed.set(fold.chatId, event);
      send(event);
    };
    const input = { ...fold.input, planned, rt, send: sendAndKeep, foldedAt: fold.base.leaf };
    const outcome = await commitFold(context, input, summary, outside);
    return outside ? emptyUsage : outcome.usage;
  }

  /** Stops a fold ahead: the summariser's request is cancelled, and nothing changes. */
  function stop(fold: PendingFold): void {
    drop(fold);
    fold.controller.abort(new DOMException("The fold ahead was stopped", "AbortError"));
    // Stopped once written, before it was applied: no abort reaches the summariser, so it is said here.
    if (fold.written)
      emit({ type: "compaction-skipped", chatId: fold.chatId, reason: fold.input.reason, why: "aborted" });
  }

  return {
    start(rt, size) {
      if (folds.has(rt.chatId)) return true;
      const planned = planFoldAhead(rt, size);
      if (!planned) return false;
      const { chatId } = rt;
      const controller = new AbortController();
      const reason: CompactionReason = planned.reason ?? "budget";
      const fold: PendingFold = {
        chatId,
        base: {
          summaryText: rt.summary?.text ?? null,
          firstKeptSeq: rt.fold.firstKeptSeq,
          nextSeq: nextSeqOf(rt),
          leaf: rt.leaf,
        },
        input: { rt, planned, size, reason, abortSignal: controller.signal, send: () => undefined },
        controller,
        summarised: Promise.resolve(null),
        turn: null,
        lastCompacting: { type: "compacting", chatId, reason, firstKeptSeq: planned.firstKeptSeq },
        settled: false,
        written: false,
      };
      const send = (event: EngineEvent) => {
        if (event.type === "compacting") fold.lastCompacting = event;
        if (fold.turn) fold.turn.send(event);
        else emit(event);
      };
      // Summarised from a copy of what it folds: the turns after it may change the chat meanwhile.
      const input: FoldInput = { ...fold.input, rt: { ...rt, log: [...rt.log] }, send };
      (fold as { summarised: Promise<FoldSummary | null> }).summarised = summariseFold(context, input).catch(
        (error: unknown) => {
          if (!isAbortError(error)) {
            parts.onError(error, { during: "fold-ahead", chatId });
            send({ type: "compaction-skipped", chatId, reason, why: "no-summary" });
          }
          return null;
        },
      );
      folds.set(chatId, fold);
      void fold.summarised.then(() => {
        fold.written = true;
        if (!fold.settled) applyInQueue(chatId, (current) => apply(fold, current, false).then(() => undefined));
      });
      return true;
    },
    async joinTurn(turn, rt, mustFold, signal) {
      const folded = landed.get(turn.chatId);
      if (folded) {
        landed.delete(turn.chatId);
        // Still the chat's summary (no fold since): this turn is the first whose request it changes.
        if (rt.summary?.at === folded.at && rt.summary.firstKeptSeq === folded.firstKeptSeq) turn.send(folded);
      }
      const fold = folds.get(turn.chatId);
      if (!fold || fold.settled) return emptyUsage;
      if (!mustFold()) {
        // On this computer the summariser is the chat's own model on the same server, one request at a time: a
        // turn that fits without the fold would queue its answer behind the summariser's requests (measured,
        // docs/engine.md), so the fold ahead gives way; it is begun again once this turn has answered.
        if (parts.provider.local) {
          stop(fold);
          return emptyUsage;
        }
        fold.turn = turn;
        turn.send(fold.lastCompacting);
        return emptyUsage;
      }
      fold.turn = turn;
      turn.send(fold.lastCompacting);
      if (signal) {
        // The turn stops waiting when it is stopped; the fold goes on for the next one.
        await Promise.race([
          fold.summarised,
          new Promise((_, reject) => {
            if (signal.aborted) reject(signal.reason);
            signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          }),
        ]);
      }
      return apply(fold, rt, true);
    },
    leaveTurn(chatId) {
      const fold = folds.get(chatId);
      if (fold) fold.turn = null;
    },
    cancel(chatId) {
      const fold = folds.get(chatId);
      if (!fold) return false;
      stop(fold);
      return true;
    },
    pending(chatId) {
      return folds.has(chatId);
    },
  };
}
