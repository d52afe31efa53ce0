import type { CompactionReason, TranscriptSize } from "../events.js";
import type { ChatMessage } from "../messages.js";
import { utf8Length } from "./estimate.js";
import { usableFactor } from "./factor.js";
import { frameSummary, summaryFrameSeparator } from "./frame.js";
import { createEstimateCache, type EstimateCache, measureMessage, messageOverheadTokens } from "./message-estimate.js";
import { heldByRoomOnly, holdTurn, type ShortenedText, shortenTurn } from "./shorten.js";
import { splitTurns, type TurnRange } from "./turns.js";

/**
 * - `auto`: every turn; folds only when the transcript is over budget, past the message limit or past
 *   the byte limit.
 * - `manual`: `/compact`; folds all but the newest turn.
 * - `heal`: after a "too long" refusal; folds all but the turn being answered and shortens it to half of
 *   the (new) budget.
 */
export type FoldMode = "auto" | "manual" | "heal";

/** A standing limit on the texts of one turn, kept from plan to plan so the request keeps its bytes. */
export interface TextLimit {
  /** The `seq` of the turn's first message. */
  readonly turnSeq: number;
  /** The longest a shortenable text of that turn may be, in UTF-16 code units (see `shortenText`). */
  readonly maxChars: number;
}

/** What a chat keeps between plans. Persist it with the transcript; without it, a plan starts from {@link initialFoldState}. */
export interface FoldState {
  /** The `seq` of the first message sent word for word; everything before it is folded. */
  readonly firstKeptSeq: number;
  /** The shortened turn's limit, or null. */
  readonly textLimit: TextLimit | null;
}

/** Nothing folded, nothing shortened. */
export const initialFoldState: FoldState = Object.freeze({ firstKeptSeq: 0, textLimit: null });

/** The transcript folds past this many messages (to half of it). */
export const transcriptMessageLimit = 600;

/** The transcript folds past this many bytes, 8 MiB (to half of it), as approximated by `estimateMessageBytes`. */
export const transcriptByteLimit = 8 * 1024 * 1024;

/**
 * What the provider counted of a transcript it was sent: the seqs of the messages sent (the summary framed in the
 * first), then the answer's, in order, and their tokens as it counted them (its input and output, less the system
 * prompt and tools at estimate × factor). Take it only from a count at least the request's estimate (a provider that
 * counts only what it had not cached, Ollama, reports less, and the estimate errs high on BPE).
 */
export interface CountedTranscript {
  readonly seqs: readonly number[];
  /** The summary sent in front of those messages (unframed), or null: the count stands only with the same one. */
  readonly summary: string | null;
  readonly tokens: number;
}

/** Input of {@link planFold}. */
export interface FoldInput {
  /** The chat's log in `seq` order (folded messages may be included: they are skipped by `previous`). Never changed. */
  readonly messages: readonly ChatMessage[];
  /** The current summary (unframed), counted in front of what is kept. Default: none. */
  readonly summary?: string | null;
  /** Tokens the transcript may use, estimate × factor (see `computeBudget`). */
  readonly budget: number;
  /** Default `"auto"`. */
  readonly mode?: FoldMode;
  /** The state the last plan returned. Default {@link initialFoldState}. */
  readonly previous?: FoldState;
  /** Tokenizer family (see `modelFamily`). Default: the all-model table. */
  readonly family?: string;
  /** The chat's correction of the estimate (see `raiseFactor`). Default 1. */
  readonly factor?: number;
  /**
   * The provider's own count of the transcript as last sent with its answer (see {@link CountedTranscript}): while
   * what is kept still begins with exactly those messages, the budget test counts them at that count, not at estimate
   * × factor. Default: none (everything at estimate × factor).
   */
  readonly counted?: CountedTranscript;
  /** The chat's estimate cache; pass the same one every turn. Default: a fresh one (everything is counted). */
  readonly cache?: EstimateCache;
  /** Default {@link transcriptMessageLimit}. */
  readonly messageLimit?: number;
  /** Default {@link transcriptByteLimit}. */
  readonly byteLimit?: number;
  /** The share of the budget what is kept fits after an `auto` fold. Default {@link foldShareFor}(budget). */
  readonly foldShare?: number;
  /** The share of the budget past which a turn that has just begun folds. Default {@link earlyFoldShareFor}(budget). */
  readonly earlyFoldShare?: number;
  /** How a turn left alone is held (see `holdTurn`). Default `turnRoomShare`. */
  readonly roomShare?: number;
  /** Default `turnReserveShare`. */
  readonly reserveShare?: number;
}

/** From this budget up, folds follow the ADR: to half the budget, and only when over it. */
export const adrFoldBudget = 50_000;

/**
 * The share of the budget an `auto` fold keeps: half (the ADR's rule) from {@link adrFoldBudget} up; 0.3
 * below, where each fold's rewrite is a bigger share of a small request (the bench's sweep, docs/bench.md).
 */
export function foldShareFor(budget: number): number {
  return budget >= adrFoldBudget ? 0.5 : 0.3;
}

/**
 * The share of the budget past which a turn that has just begun (the person's message alone) folds: 1 at every
 * budget, the ADR's rule (a fold only when over the budget). 0.85 below {@link adrFoldBudget} (fewer folds in the
 * middle of an agent turn, 1.4–2.1% cheaper in the bench's sweep) folded at 55–64% of a real window where the
 * budget is 65–75% of it (#26, docs/bench.md), and reused less of the prompt cache (0.13–0.40 point); the
 * `earlyFoldShare` option keeps the sweep's other values.
 */
export function earlyFoldShareFor(_budget: number): number {
  return 1;
}

/** What to send this turn, and what to fold. */
export interface FoldPlan {
  /** Whether whole turns leave the front (then summarise `folded`). */
  readonly fold: boolean;
  /** Why the plan folds or shortens; null when nothing triggered. `manual` and `heal` always give theirs. */
  readonly reason: CompactionReason | null;
  /** The `seq` of the first kept message (where the model's word-for-word memory starts). */
  readonly firstKeptSeq: number;
  /** Messages that leave this time, in order; empty unless `fold`. */
  readonly folded: readonly ChatMessage[];
  /** The messages to send, in order; shortened ones are new objects. Frame the summary with `buildRequestMessages`. */
  readonly kept: readonly ChatMessage[];
  /** Every text of `kept` that is shortened (standing or new). */
  readonly shortened: readonly ShortenedText[];
  /** The state to keep for the next plan. The same object as `previous` when nothing changed. */
  readonly state: FoldState;
  /** Whether what is sent changes other than at its end (a fold or a new text limit): the prompt cache restarts. */
  readonly changed: boolean;
  /**
   * Tokens of the transcript to send, framed summary included, estimate × factor, rounded up. The current
   * summary stands in for the one a fold will write.
   */
  readonly tokens: number;
  /** Whether `tokens` ≤ budget. False only when the turn being answered cannot be made small enough. */
  readonly fits: boolean;
  /** The transcript before this plan (with the summary). */
  readonly before: TranscriptSize;
  /** The transcript this plan sends (with the summary). */
  readonly after: TranscriptSize;
  /** Approximate serialized bytes of the kept messages and the summary. */
  readonly bytes: number;
}

/**
 * The kept transcript's size for the budget test: estimate × factor, but for the messages the provider last counted
 * (while what is kept still begins with exactly them, under the same summary), which count at that count, never
 * below their estimate. Why: the factor is the highest ratio any long request ran, and a chat's mix of texts runs
 * below it most of the time (docs/engine.md, "The estimate's correction").
 */
function countedSize(
  input: FoldInput,
  cache: EstimateCache,
  kept: { readonly start: number; readonly turns: readonly TurnRange[]; readonly turnTokens: readonly number[] },
  keptTokens: number,
  summaryTokens: number,
  factor: number,
  limitedTurn: number,
): number {
  const { counted, messages } = input;
  const estimated = factor * keptTokens;
  if (counted === undefined || counted.summary !== (input.summary ?? null)) return estimated;
  const coveredEnd = kept.start + counted.seqs.length;
  if (counted.seqs.length === 0 || coveredEnd > messages.length) return estimated;
  for (const [offset, seq] of counted.seqs.entries()) {
    if ((messages[kept.start + offset] as ChatMessage).seq !== seq) return estimated;
  }
  // Whole turns as the plan counts them (a held turn as held); a turn the count covers in part, message by message.
  let coveredTokens = summaryTokens;
  for (const [turn, { from, to }] of kept.turns.entries()) {
    if (to <= coveredEnd) coveredTokens += kept.turnTokens[turn] as number;
    else {
      if (from >= coveredEnd) break;
      if (turn === limitedTurn) return estimated;
      for (let index = from; index < coveredEnd; index++) {
        coveredTokens += measureMessage(messages[index] as ChatMessage, input.family, cache).tokens;
      }
      break;
    }
  }
  return factor * (keptTokens - coveredTokens) + Math.max(counted.tokens, coveredTokens);
}

interface SummaryMeasure {
  readonly tokens: number;
  readonly bytes: number;
}

function measureSummary(summary: string | null, family: string | undefined, cache: EstimateCache): SummaryMeasure {
  if (!summary) return { tokens: 0, bytes: 0 };
  const last = cache.lastSummary;
  if (last !== null && last.text === summary && last.family === family) return last;
  // Counted as a text of its own plus a message's overhead: never less than what buildRequestMessages sends.
  const tokens = cache.estimator(frameSummary(summary) + summaryFrameSeparator, family) + messageOverheadTokens;
  cache.lastSummary = { text: summary, family, tokens, bytes: utf8Length(summary) };
  return cache.lastSummary;
}

/** Index of the first message whose seq is at least `seq` (messages are in seq order). */
function firstIndexFrom(messages: readonly ChatMessage[], seq: number): number {
  let low = 0;
  let high = messages.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((messages[middle] as ChatMessage).seq < seq) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Plans one request (ADR 0055 §2): which turns leave the front, which texts are shortened, what is sent.
 *
 * - Triggers (`auto`): the transcript with its summary over `budget` (over {@link earlyFoldShareFor} of it
 *   when the last turn is the person's message alone), or past `messageLimit` messages, or past `byteLimit` bytes.
 * - Whole turns leave from the front, in order, until what is kept (summary included) fits
 *   {@link foldShareFor} of the budget (half from {@link adrFoldBudget} up), and half of the message or byte
 *   limit that was passed. `manual` and `heal` fold all but the last turn.
 * - The turn being answered (the last) always stays. A turn left alone (the chat's first, or what a fold
 *   keeps) is held from then on (see `holdTurn`): each long text shortened once, when first sent, so the
 *   bytes already sent never change as it grows. When even that is too big (`heal`: bigger than half the
 *   budget), its longest texts are shortened until it fits half the budget; the model's own messages never
 *   change. The limit stands in later plans, so the request keeps its prefix.
 * - Between two folds, what is sent only grows at its end (but for a turn that outgrows its held room).
 *
 * Pure: the log is never changed, and the plan costs in proportion to the new messages when the same
 * `cache` is passed every turn.
 */
export function planFold(input: FoldInput): FoldPlan {
  const mode = input.mode ?? "auto";
  const cache = input.cache ?? createEstimateCache();
  const family = input.family;
  const factor = usableFactor(input.factor);
  const budget = Math.max(0, input.budget);
  const messageLimit = input.messageLimit ?? transcriptMessageLimit;
  const byteLimit = input.byteLimit ?? transcriptByteLimit;
  const foldShare = input.foldShare ?? foldShareFor(budget);
  const earlyShare = input.earlyFoldShare ?? earlyFoldShareFor(budget);
  const previous = input.previous ?? initialFoldState;
  const messages = input.messages;
  const end = messages.length;
  const start = firstIndexFrom(messages, previous.firstKeptSeq);
  const summary = measureSummary(input.summary ?? null, family, cache);
  const standingLimit = previous.textLimit;

  // One pass over what is kept: what each turn costs as it would be sent (under the standing limit).
  const turns = splitTurns(messages, start);
  const turnCount = turns.length;
  const turnTokens: number[] = [];
  const turnBytes: number[] = [];
  let limitedTurn = -1;
  let keptTokens = summary.tokens;
  let keptBytes = summary.bytes;
  // A shortened turn may use the budget less the summary; its texts are held within that (see holdTurn).
  const turnRoom = budget / factor - summary.tokens;
  const hold = (from: number, to: number, maxChars: number) =>
    holdTurn({
      messages: messages.slice(from, to),
      maxChars,
      roomTokens: turnRoom,
      family,
      cache,
      ...(input.roomShare !== undefined && { roomShare: input.roomShare }),
      ...(input.reserveShare !== undefined && { reserveShare: input.reserveShare }),
    });
  for (let turn = 0; turn < turnCount; turn++) {
    const { from, to } = turns[turn] as TurnRange;
    const limit = standingLimit?.turnSeq === (messages[from] as ChatMessage).seq ? standingLimit : null;
    if (limit !== null) limitedTurn = turn;
    let tokens = 0;
    let bytes = 0;
    for (let index = from; index < to; index++) {
      const measure = measureMessage(messages[index] as ChatMessage, family, cache);
      bytes += measure.bytes;
      tokens += measure.tokens;
    }
    if (limit !== null) tokens = hold(from, to, limit.maxChars).tokens;
    turnTokens.push(tokens);
    turnBytes.push(bytes);
    keptTokens += tokens;
    keptBytes += bytes;
  }
  const at = (values: readonly number[], index: number) => values[index] as number;
  let keptMessages = end - start;
  const sizedKept = countedSize(
    input,
    cache,
    { start, turns, turnTokens },
    keptTokens,
    summary.tokens,
    factor,
    limitedTurn,
  );
  // What the count changes of the size at estimate × factor: it holds for what is sent as long as nothing changes.
  const countedCorrection = sizedKept - factor * keptTokens;
  const before: TranscriptSize = { messages: keptMessages, tokens: Math.ceil(sizedKept) };

  // A turn that has just begun (the person's message alone) folds early, past a share of the budget: then the
  // fold sends again only the turns it keeps, not an agent turn that has grown since.
  const lastTurnBegins =
    turnCount > 1 && (turns[turnCount - 1] as TurnRange).to - (turns[turnCount - 1] as TurnRange).from === 1;
  const overBudget = sizedKept > (lastTurnBegins ? earlyShare : 1) * budget;
  const overMessages = keptMessages > messageLimit;
  const overBytes = keptBytes > byteLimit;
  let reason: CompactionReason | null;
  switch (mode) {
    case "auto":
      reason = overBudget ? "budget" : overMessages ? "messages" : overBytes ? "bytes" : null;
      break;
    case "manual":
      reason = "manual";
      break;
    case "heal":
      reason = "too-long";
      break;
    default:
      return mode satisfies never;
  }

  // Whole turns leave from the front; the last turn always stays.
  const lastTurn = turnCount - 1;
  let firstTurn = 0;
  if (reason !== null && turnCount > 1) {
    if (mode === "auto") {
      const messageTarget = overMessages ? messageLimit / 2 : messageLimit;
      const byteTarget = overBytes ? byteLimit / 2 : byteLimit;
      while (
        firstTurn < lastTurn &&
        (factor * keptTokens > foldShare * budget || keptMessages > messageTarget || keptBytes > byteTarget)
      ) {
        const { from, to } = turns[firstTurn] as TurnRange;
        keptTokens -= at(turnTokens, firstTurn);
        keptBytes -= at(turnBytes, firstTurn);
        keptMessages -= to - from;
        firstTurn++;
      }
    } else {
      firstTurn = lastTurn;
      keptTokens = summary.tokens + at(turnTokens, lastTurn);
      keptBytes = summary.bytes + at(turnBytes, lastTurn);
    }
  }

  // A turn left alone (the chat's first, or what a fold keeps) is held from then on (see holdTurn), so its
  // bytes never change as it grows. Only when that is not enough, it gets a limit of its own: its longest
  // texts shortened to fit half the budget (then the prefix breaks).
  let textLimit = standingLimit !== null && limitedTurn >= firstTurn ? standingLimit : null;
  if (turnCount > 0 && firstTurn === lastTurn) {
    const { from } = turns[lastTurn] as TurnRange;
    const turnSeq = (messages[from] as ChatMessage).seq;
    if (textLimit?.turnSeq !== turnSeq) {
      textLimit = { turnSeq, maxChars: heldByRoomOnly };
      keptTokens = summary.tokens + hold(from, end, heldByRoomOnly).tokens;
    }
    const shortenAbove = mode === "heal" ? budget / 2 : budget;
    if (reason !== null && factor * keptTokens > shortenAbove) {
      const result = shortenTurn({
        messages: messages.slice(from, end),
        targetTokens: budget / 2 / factor - summary.tokens,
        family,
        cache,
      });
      if (result.maxChars !== null && result.maxChars !== textLimit.maxChars) {
        textLimit = { turnSeq, maxChars: result.maxChars };
      }
    }
  }

  const keptFrom = turnCount > 0 ? (turns[firstTurn] as TurnRange).from : end;
  // The limit holds the standing limit's turn, or the last turn when it is new.
  const limited = textLimit === null ? undefined : turns[textLimit === standingLimit ? limitedTurn : lastTurn];
  const kept: ChatMessage[] = [];
  const shortened: ShortenedText[] = [];
  let sentTokens = summary.tokens;
  const held = textLimit === null || limited === undefined ? null : hold(limited.from, limited.to, textLimit.maxChars);
  if (held !== null) shortened.push(...held.shortened);
  for (let index = keptFrom; index < end; index++) {
    let message = messages[index] as ChatMessage;
    if (held !== null && limited !== undefined && index >= limited.from && index < limited.to) {
      message = held.messages[index - limited.from] as ChatMessage;
    }
    kept.push(message);
    sentTokens += measureMessage(message, family, cache).tokens;
  }

  const fold = firstTurn > 0;
  const changed = fold || textLimit !== standingLimit;
  const firstKeptSeq = kept[0]?.seq ?? previous.firstKeptSeq;
  const state: FoldState = changed ? { firstKeptSeq, textLimit } : previous;
  const sentSized = factor * sentTokens + (changed ? 0 : countedCorrection);
  const sentSize = Math.ceil(sentSized);
  return {
    fold,
    reason,
    firstKeptSeq,
    folded: fold ? messages.slice(start, keptFrom) : [],
    kept,
    shortened,
    state,
    changed,
    tokens: sentSize,
    fits: sentSized <= budget,
    before,
    after: { messages: kept.length, tokens: sentSize },
    bytes: keptBytes,
  };
}
