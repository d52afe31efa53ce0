import type { ChatMessage, MessagePart } from "../messages.js";
import {
  defaultTokenEstimator,
  type PreTokenWeights,
  type ScanSizes,
  scanPreTokens,
  type TokenEstimator,
  utf8Length,
  weightsFor,
} from "./estimate.js";
import type { ShortenedCopy } from "./shorten.js";

/** Estimated tokens of a picture whose bytes the provider receives (inline data or a link it fetches). */
export const pictureTokens = 1_600;

/** Estimated tokens a message costs beyond its content: role markers and the chat template's separators. */
export const messageOverheadTokens = 4;

/** Bytes a message or a part adds to a serialized transcript beyond its texts (keys, quotes, seq). */
const messageOverheadBytes = 48;
const partOverheadBytes = 24;

/**
 * Which thinking parts count: the ones sent back to the provider.
 * - `signed`: parts with a signature or redacted (what Anthropic and Gemini ask back); unsigned reasoning
 *   (DeepSeek, Qwen, local servers) is not sent.
 * - `all`: every thinking part.
 * - `none`: no thinking part.
 */
export type ThinkingSentBack = "signed" | "all" | "none";

/** Options of an {@link EstimateCache}. */
export interface EstimateCacheOptions {
  /** Counts the tokens of one text. Default: {@link defaultTokenEstimator}. */
  readonly estimator?: TokenEstimator;
  /** Which thinking parts are sent back and so count. Default `"signed"`. */
  readonly thinking?: ThinkingSentBack;
}

/** What one message costs: estimated tokens for one family, and approximate serialized bytes. */
export interface MessageMeasure {
  /** The family the tokens were counted for; undefined is the all-model table. */
  readonly family: string | undefined;
  readonly tokens: number;
  /** UTF-8 bytes of the message's texts, arguments, ids and picture data, plus a little for the JSON around them. */
  readonly bytes: number;
}

/**
 * Per-message estimates, computed once and reused: a chat keeps one cache, so planning a turn costs in
 * proportion to what changed, not to the whole chat. Keyed by message object (a `WeakMap`): a log that
 * keeps its message objects pays only for new messages; a message that changes must be a new object
 * (the log's messages are immutable anyway). Counting for another family recounts tokens once.
 */
export interface EstimateCache {
  /** Counts the tokens of one text. */
  readonly estimator: TokenEstimator;
  /** Which thinking parts count. */
  readonly thinking: ThinkingSentBack;
  /** Measures by message object. */
  readonly measures: WeakMap<ChatMessage, MessageMeasure>;
  /** Shortened copies by original message object, so a shortened turn is built once (see `planFold`). */
  readonly shortenedCopies: WeakMap<ChatMessage, ShortenedCopy>;
  /** Each message's limit within a shortened turn, by original message object (see `holdTurn`). */
  readonly heldLimits: WeakMap<
    ChatMessage,
    { readonly maxChars: number; readonly left: number; readonly family: string | undefined; readonly limit: number }
  >;
  /** The last framed summary measured, so an unchanged summary is not counted again. */
  lastSummary: {
    readonly text: string;
    readonly family: string | undefined;
    readonly tokens: number;
    readonly bytes: number;
  } | null;
}

/** A new, empty {@link EstimateCache}: one per chat, shared by every plan of that chat. */
export function createEstimateCache(options: EstimateCacheOptions = {}): EstimateCache {
  return {
    estimator: options.estimator ?? defaultTokenEstimator,
    thinking: options.thinking ?? "signed",
    measures: new WeakMap(),
    shortenedCopies: new WeakMap(),
    heldLimits: new WeakMap(),
    lastSummary: null,
  };
}

/**
 * Counts a message's texts with the built-in scan (tokens and bytes in one pass, `table` set) or with an injected
 * estimator. Plain data, no closures: one is made per message measured, and a long chat arriving whole has many.
 */
interface TextCounter {
  readonly estimator: TokenEstimator;
  readonly family: string | undefined;
  /** The family's weights when the estimator is the built-in one, else null. */
  readonly table: PreTokenWeights | null;
  readonly sizes: ScanSizes;
}

function textCounter(estimator: TokenEstimator, family: string | undefined): TextCounter {
  const table = estimator === defaultTokenEstimator ? weightsFor(family) : null;
  return { estimator, family, table, sizes: { utf8Bytes: 0 } };
}

function countText(counter: TextCounter, text: string): number {
  if (counter.table !== null) return Math.ceil(scanPreTokens(text, counter.table, counter.sizes));
  counter.sizes.utf8Bytes += utf8Length(text);
  return counter.estimator(text, counter.family);
}

/** Whether a thinking part is sent back, and so counts. */
function thinkingSentBack(part: Extract<MessagePart, { type: "thinking" }>, policy: ThinkingSentBack): boolean {
  switch (policy) {
    case "signed":
      return part.signature !== undefined || part.redacted === true;
    case "all":
      return true;
    case "none":
      return false;
    default:
      return policy satisfies never;
  }
}

function partTokens(part: MessagePart, counter: TextCounter, thinking: ThinkingSentBack): number {
  switch (part.type) {
    case "text":
      return countText(counter, part.text);
    case "thinking":
      // Counted or not, its bytes are still in the transcript file.
      if (thinkingSentBack(part, thinking)) return countText(counter, part.text);
      counter.sizes.utf8Bytes += utf8Length(part.text) + (part.signature?.length ?? 0);
      return 0;
    case "tool-call":
      return countText(counter, part.id) + countText(counter, part.name) + countText(counter, part.arguments);
    case "tool-result":
      return (
        countText(counter, part.callId) +
        (part.name ? countText(counter, part.name) : 0) +
        countText(counter, part.text)
      );
    case "picture": {
      counter.sizes.utf8Bytes += (part.data?.length ?? 0) + (part.url?.length ?? 0) + part.name.length;
      return part.data !== undefined || part.url !== undefined ? pictureTokens : 0;
    }
    default:
      return part satisfies never;
  }
}

function computeMeasure(message: ChatMessage, family: string | undefined, cache: EstimateCache): MessageMeasure {
  const counter = textCounter(cache.estimator, family);
  let tokens = messageOverheadTokens;
  for (const part of message.parts) tokens += partTokens(part, counter, cache.thinking);
  const bytes = counter.sizes.utf8Bytes + messageOverheadBytes + partOverheadBytes * message.parts.length;
  return { family, tokens, bytes };
}

/** The cache to use when the caller gave none: a throwaway one, so nothing is kept between calls. */
function cacheOrFresh(cache: EstimateCache | undefined): EstimateCache {
  return cache ?? createEstimateCache();
}

/**
 * The measure of one message for one family, from the cache when it has one.
 * Internal to the planner, which needs tokens and bytes together.
 */
export function measureMessage(message: ChatMessage, family: string | undefined, cache: EstimateCache): MessageMeasure {
  const known = cache.measures.get(message);
  if (known !== undefined && known.family === family) return known;
  const measure = computeMeasure(message, family, cache);
  cache.measures.set(message, measure);
  return measure;
}

/**
 * Estimated tokens of one message as sent: its text, tool calls (id, name and arguments), tool results,
 * the thinking that is sent back, {@link pictureTokens} per picture the provider receives, and
 * {@link messageOverheadTokens}. Not multiplied by the chat's factor.
 *
 * @param family tokenizer family (see `modelFamily`); default: the all-model table.
 * @param cache reuse estimates across calls; default: none (the message is counted again every call).
 */
export function estimateMessageTokens(message: ChatMessage, family?: string, cache?: EstimateCache): number {
  return measureMessage(message, family, cacheOrFresh(cache)).tokens;
}

/**
 * Estimated tokens of a list of messages (the sum of {@link estimateMessageTokens}); not multiplied by the
 * chat's factor. Use it for the request's estimate that the factor is learned from.
 */
export function estimateMessagesTokens(
  messages: readonly ChatMessage[],
  family?: string,
  cache?: EstimateCache,
): number {
  const shared = cacheOrFresh(cache);
  let tokens = 0;
  for (const message of messages) tokens += measureMessage(message, family, shared).tokens;
  return tokens;
}

/**
 * Approximate serialized size of one message in bytes: the UTF-8 length of its texts, arguments, ids and
 * picture data, plus a fixed allowance for the JSON around them. The planner's 8 MB limit reads this,
 * not the file on disk, so it needs no I/O.
 */
export function estimateMessageBytes(message: ChatMessage, cache?: EstimateCache): number {
  const shared = cacheOrFresh(cache);
  const known = shared.measures.get(message);
  return (known ?? measureMessage(message, undefined, shared)).bytes;
}
