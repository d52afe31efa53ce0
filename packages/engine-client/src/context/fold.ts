import type { CompactionReason, TranscriptSize } from "../events.js";
import type { ChatMessage } from "../messages.js";
import { utf8Length } from "./estimate.js";
import { usableFactor } from "./factor.js";
import { frameSummary, summaryFrameSeparator } from "./frame.js";
import { createEstimateCache, type EstimateCache, measureMessage, messageOverheadTokens } from "./message-estimate.js";
import { type ShortenedText, shortenMessage, shortenTurn } from "./shorten.js";
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
  /** The chat's estimate cache; pass the same one every turn. Default: a fresh one (everything is counted). */
  readonly cache?: EstimateCache;
  /** Default {@link transcriptMessageLimit}. */
  readonly messageLimit?: number;
  /** Default {@link transcriptByteLimit}. */
  readonly byteLimit?: number;
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
 * - Triggers (`auto`): the transcript with its summary over `budget`, or past `messageLimit` messages, or
 *   past `byteLimit` bytes.
 * - Whole turns leave from the front, in order, until what is kept (summary included) fits half the budget,
 *   and half of the message or byte limit that was passed. `manual` and `heal` fold all but the last turn.
 * - The turn being answered (the last) always stays. When it alone is bigger than the budget (`heal`: than
 *   half of it), its longest texts are shortened until it fits half the budget; the model's own messages
 *   never change. The limit stands in later plans, so the request keeps its prefix.
 * - Between two folds, what is sent only grows at its end.
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
  for (let turn = 0; turn < turnCount; turn++) {
    const { from, to } = turns[turn] as TurnRange;
    const limit = standingLimit?.turnSeq === (messages[from] as ChatMessage).seq ? standingLimit : null;
    if (limit !== null) limitedTurn = turn;
    let tokens = 0;
    let bytes = 0;
    for (let index = from; index < to; index++) {
      const message = messages[index] as ChatMessage;
      const measure = measureMessage(message, family, cache);
      bytes += measure.bytes;
      tokens +=
        limit === null
          ? measure.tokens
          : measureMessage(shortenMessage(message, limit.maxChars, cache).message, family, cache).tokens;
    }
    turnTokens.push(tokens);
    turnBytes.push(bytes);
    keptTokens += tokens;
    keptBytes += bytes;
  }
  const at = (values: readonly number[], index: number) => values[index] as number;
  let keptMessages = end - start;
  const before: TranscriptSize = { messages: keptMessages, tokens: Math.ceil(factor * keptTokens) };

  const overBudget = factor * keptTokens > budget;
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
        (factor * keptTokens > budget / 2 || keptMessages > messageTarget || keptBytes > byteTarget)
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

  // A last turn that alone is too big gets its longest texts shortened, to half the budget.
  let textLimit = standingLimit !== null && limitedTurn >= firstTurn ? standingLimit : null;
  if (reason !== null && turnCount > 0 && firstTurn === lastTurn) {
    const shortenAbove = mode === "heal" ? budget / 2 : budget;
    if (factor * keptTokens > shortenAbove) {
      const { from } = turns[lastTurn] as TurnRange;
      const result = shortenTurn({
        messages: messages.slice(from, end),
        targetTokens: budget / 2 / factor - summary.tokens,
        family,
        cache,
      });
      const turnSeq = (messages[from] as ChatMessage).seq;
      const same = textLimit !== null && textLimit.turnSeq === turnSeq && textLimit.maxChars === result.maxChars;
      if (result.maxChars !== null && !same) textLimit = { turnSeq, maxChars: result.maxChars };
    }
  }

  const keptFrom = turnCount > 0 ? (turns[firstTurn] as TurnRange).from : end;
  // The limit holds the standing limit's turn, or the last turn when it is new.
  const limited = textLimit === null ? undefined : turns[textLimit === standingLimit ? limitedTurn : lastTurn];
  const kept: ChatMessage[] = [];
  const shortened: ShortenedText[] = [];
  let sentTokens = summary.tokens;
  for (let index = keptFrom; index < end; index++) {
    let message = messages[index] as ChatMessage;
    if (textLimit !== null && limited !== undefined && index >= limited.from && index < limited.to) {
      const copy = shortenMessage(message, textLimit.maxChars, cache);
      message = copy.message;
      if (copy.shortened.length > 0) shortened.push(...copy.shortened);
    }
    kept.push(message);
    sentTokens += measureMessage(message, family, cache).tokens;
  }

  const fold = firstTurn > 0;
  const changed = fold || textLimit !== standingLimit;
  const firstKeptSeq = kept[0]?.seq ?? previous.firstKeptSeq;
  const state: FoldState = changed ? { firstKeptSeq, textLimit } : previous;
  const sentSize = Math.ceil(factor * sentTokens);
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
    fits: factor * sentTokens <= budget,
    before,
    after: { messages: kept.length, tokens: sentSize },
    bytes: keptBytes,
  };
}
