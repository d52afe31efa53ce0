// What the suite and the bench read from one chat on a real llama-server: the engine's turns (scripts/real-server-chat.ts)
// beside the server's own record of each request (scripts/recording-proxy.ts).
import { estimateTokens, messageOverheadTokens } from "@conch/engine-client/context";
import { recogniseTooLong } from "@conch/engine-client/providers";
import type { TurnRecord } from "./real-server-chat.js";
import type { TurnKind } from "./real-server-turns.js";
import type { RecordedExchange } from "./recording-proxy.js";

/** One turn's exchanges with the server, in order. */
export interface TurnExchanges {
  readonly record: TurnRecord;
  readonly exchanges: readonly RecordedExchange[];
}

/** A refusal the server sent: llama-server's `exceed_context_size_error` body. */
export interface ServerRefusal {
  readonly exchange: RecordedExchange;
  readonly nCtx: number;
  readonly nPromptTokens: number;
}

export function refusalOf(exchange: RecordedExchange): ServerRefusal | null {
  if (exchange.status < 400) return null;
  const error = (exchange.errorBody as { error?: { type?: string; n_ctx?: number; n_prompt_tokens?: number } })?.error;
  if (error?.type !== "exceed_context_size_error") return null;
  return { exchange, nCtx: error.n_ctx ?? 0, nPromptTokens: error.n_prompt_tokens ?? 0 };
}

/** Whether the server refused the request: an error status, or an error inside a 200 stream. */
export function failed(exchange: RecordedExchange): boolean {
  return exchange.status >= 400 || exchange.streamError !== undefined;
}

/** The window the engine's classifier reads from a refusal (what the engine heals with). */
export function recognisedWindow(exchange: RecordedExchange): number | undefined | null {
  const recognised = recogniseTooLong("llama.cpp", exchange.status, exchange.errorBody);
  return recognised === null ? null : recognised.window;
}

/** Whether two summariser requests are the same request (model, messages, answer room). */
export function sameRequest(a: RecordedExchange, b: RecordedExchange): boolean {
  return JSON.stringify(a.body) === JSON.stringify(b.body);
}

/** The text of a sent message (a string, or OpenAI's parts joined). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part?.text === "string" ? (part.text as string) : "")).join("");
  }
  return "";
}

const median = (values: readonly number[]) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** The figures of one chat (the bench's row; the suite asserts on them). */
export interface ChatFigures {
  readonly turns: number;
  readonly folds: number;
  /** Per fold: the server's count of what would have been sent had the engine not folded, over the window. */
  readonly fills: readonly number[];
  readonly minFill: number;
  readonly medianFill: number;
  /**
   * Per fold: the engine's estimate of that same request (every message's text and its per-message allowance, no
   * family table) × the factor the chat was sized with before the fold, over the server's count. Above 1 the engine
   * over-counted it, and folded early by that much.
   */
  readonly estimateOverCount: readonly number[];
  /** Per fold: what was measured at it, to say why it came where it did (the bench prints one line a fold). */
  readonly foldDetails: readonly FoldDetail[];
  readonly summaryRequests: number;
  readonly summaryRefused: number;
  /** Summariser requests identical to the summariser request just before them. */
  readonly summaryRepeats: number;
  /** The most refused summariser requests of one fold. */
  readonly maxSummaryRefusedPerFold: number;
  readonly summariesWritten: number;
  readonly answerRequests: number;
  readonly answersRefused: number;
  readonly heals: number;
  readonly turnProblems: number;
  /** Prompt tokens the server read from its cache over all prompt tokens of answer requests (its own timings). */
  readonly cacheShare: number;
  /** The prompt tokens of answered answer requests, read from the cache or not: what `cacheShare` is a share of. */
  readonly answerPromptTokens: number;
  /**
   * Of those prompt tokens, the ones the server could not read from its cache only because it tokenized the last
   * answer's text into other tokens than the ones it generated (a model's sampled tokens need not be the ones its
   * tokenizer would choose for the same text): of a request that begins with the last answer request's messages
   * and its answer word for word (no summariser request between them), that request's prompt and answer (less its
   * last token, which the server evaluates again) beyond what it read from the cache.
   */
  readonly retokenizedTokens: number;
  readonly secondsPerTurn: number;
  readonly medianSecondsPerTurn: number;
  /** The server's own work for this chat's answer and summariser requests (their `timings`). */
  readonly serverWork: ServerWork;
}

/** One fold as measured: the request that would have been sent had the engine not folded. */
export interface FoldDetail {
  /** The turn (from 1) whose message came when the chat folded. */
  readonly turn: number;
  /** The kind of text of each person's message since the chat's start, up to this turn's: the last few say the mix. */
  readonly kinds: readonly TurnKind[];
  /** The server's count of that request (the last answer's prompt and answer tokens, plus the new message). */
  readonly counted: number;
  /** The engine's estimate of it (texts and 4 tokens a message), before the factor. */
  readonly estimated: number;
  /** The factor the chat was sized with before the fold (the last turn's `contextUsage.factor`). */
  readonly factor: number | null;
  /** The new message alone: the server's count and the estimate. */
  readonly newMessage: { readonly counted: number; readonly estimated: number };
  /** Of the would-be request's estimate, the share of the model's own answers (assistant messages). */
  readonly answerShare: number;
}

/** What the server did for some requests, by its own `timings`: where a chat's time went. */
export interface ServerWork {
  readonly requests: number;
  /** Prompt tokens it processed (not read from its cache), and the milliseconds that took. */
  readonly promptTokens: number;
  readonly promptMs: number;
  readonly predictedTokens: number;
  readonly predictedMs: number;
}

/** Sums the server's `timings` of `exchanges`' answer and summariser requests. */
export function serverWork(exchanges: readonly RecordedExchange[]): ServerWork {
  const requests = exchanges.filter((exchange) => exchange.kind !== "other");
  const total = (count: (timings: NonNullable<RecordedExchange["timings"]>) => number) =>
    requests.reduce((sum, exchange) => sum + (exchange.timings ? count(exchange.timings) : 0), 0);
  return {
    requests: requests.length,
    promptTokens: total((timings) => timings.prompt_n),
    promptMs: Math.round(total((timings) => timings.prompt_ms ?? 0)),
    predictedTokens: total((timings) => timings.predicted_n),
    predictedMs: Math.round(total((timings) => timings.predicted_ms ?? 0)),
  };
}

/** Whether `next` sends `before`'s messages and then its answer, word for word. */
function repeatsWordForWord(before: RecordedExchange, next: RecordedExchange): boolean {
  const sent = before.body?.messages ?? [];
  const now = next.body?.messages ?? [];
  const answer = now[sent.length];
  return (
    answer !== undefined &&
    answer.role === "assistant" &&
    contentText(answer.content) === (before.text ?? "") &&
    sent.every((message, index) => JSON.stringify(message) === JSON.stringify(now[index]))
  );
}

/**
 * Reads one chat's figures. `tokenize` is the server's own count (`/tokenize`). The fill at a fold is the last
 * answer request's prompt and answer (the server's usage) plus the new message, as the server tokenizes it,
 * over the window: the request that would have been sent, had the engine not folded.
 */
export async function chatFigures(
  turns: readonly TurnExchanges[],
  window: number,
  tokenize: (text: string) => Promise<number>,
): Promise<ChatFigures> {
  const fills: number[] = [];
  const estimateOverCount: number[] = [];
  const foldDetails: FoldDetail[] = [];
  const kinds: TurnKind[] = [];
  let lastAnswer: RecordedExchange | null = null;
  let sizedWith: number | null = null;
  let summaryRequests = 0;
  let summaryRefused = 0;
  let summaryRepeats = 0;
  let maxSummaryRefusedPerFold = 0;
  let answerRequests = 0;
  let answersRefused = 0;
  let promptTokens = 0;
  let cachedTokens = 0;
  let retokenizedTokens = 0;
  /** The answer request whose prompt and answer the next one can read from the cache: none after a summariser's. */
  let reuseBase: RecordedExchange | null = null;
  let previousSummary: RecordedExchange | null = null;
  for (const { record, exchanges } of turns) {
    kinds.push(record.turn.kind);
    const folded = record.compacted.some((event) => event.reason !== "manual");
    if (folded && lastAnswer?.usage) {
      const newMessage = await tokenize(record.turn.text);
      const counted = lastAnswer.usage.prompt_tokens + lastAnswer.usage.completion_tokens + newMessage;
      fills.push(counted / window);
      const sent = (lastAnswer.body?.messages ?? []).map((message) => ({
        role: message.role,
        text: contentText(message.content),
      }));
      const texts = [
        ...sent,
        { role: "assistant", text: lastAnswer.text ?? "" },
        { role: "user", text: record.turn.text },
      ];
      const estimateOf = (text: string) => estimateTokens(text) + messageOverheadTokens;
      const estimated = texts.reduce((sum, { text }) => sum + estimateOf(text), 0);
      const answers = texts.reduce((sum, { role, text }) => sum + (role === "assistant" ? estimateOf(text) : 0), 0);
      if (sizedWith !== null) estimateOverCount.push((estimated * sizedWith) / counted);
      foldDetails.push({
        turn: record.index + 1,
        kinds: [...kinds],
        counted,
        estimated,
        factor: sizedWith,
        newMessage: { counted: newMessage, estimated: estimateOf(record.turn.text) },
        answerShare: estimated > 0 ? answers / estimated : 0,
      });
    }
    sizedWith = record.contextUsage?.factor ?? sizedWith;
    let refusedThisTurn = 0;
    for (const exchange of exchanges) {
      if (exchange.kind === "summary") {
        reuseBase = null;
        summaryRequests++;
        if (previousSummary && sameRequest(previousSummary, exchange)) summaryRepeats++;
        previousSummary = exchange;
        if (failed(exchange)) {
          summaryRefused++;
          refusedThisTurn++;
        }
      } else if (exchange.kind === "chat") {
        answerRequests++;
        if (failed(exchange)) {
          answersRefused++;
          reuseBase = null;
        } else {
          const before = folded ? null : reuseBase;
          lastAnswer = exchange;
          reuseBase = exchange;
          if (exchange.timings) {
            promptTokens += exchange.timings.prompt_n + exchange.timings.cache_n;
            cachedTokens += exchange.timings.cache_n;
            if (before?.timings && before.usage && repeatsWordForWord(before, exchange)) {
              const reusable = before.timings.cache_n + before.timings.prompt_n + before.usage.completion_tokens - 1;
              retokenizedTokens += Math.max(0, reusable - exchange.timings.cache_n);
            }
          }
        }
      }
    }
    maxSummaryRefusedPerFold = Math.max(maxSummaryRefusedPerFold, refusedThisTurn);
  }
  const seconds = turns.map(({ record }) => record.milliseconds / 1000);
  return {
    turns: turns.length,
    folds: turns.reduce((sum, { record }) => sum + record.compacted.filter((e) => e.reason !== "manual").length, 0),
    fills,
    minFill: fills.length ? Math.min(...fills) : Number.NaN,
    medianFill: median(fills),
    estimateOverCount,
    foldDetails,
    summaryRequests,
    summaryRefused,
    summaryRepeats,
    maxSummaryRefusedPerFold,
    summariesWritten: turns.reduce(
      (sum, { record }) => sum + record.compacted.filter((event) => event.model !== null).length,
      0,
    ),
    answerRequests,
    answersRefused,
    heals: turns.reduce((sum, { record }) => sum + record.healed.length, 0),
    turnProblems: turns.filter(({ record }) => record.problem !== null).length,
    cacheShare: promptTokens === 0 ? 0 : cachedTokens / promptTokens,
    answerPromptTokens: promptTokens,
    retokenizedTokens,
    secondsPerTurn: seconds.reduce((sum, value) => sum + value, 0) / Math.max(1, seconds.length),
    medianSecondsPerTurn: median(seconds),
    serverWork: serverWork(turns.flatMap(({ exchanges }) => exchanges)),
  };
}
