import type { ChatMessage, MessagePart, TextPart, ToolResultPart } from "../messages.js";
import { createEstimateCache, type EstimateCache, measureMessage } from "./message-estimate.js";

/**
 * The shortest a shortened text gets, in UTF-16 code units of kept head and tail together, unless the turn
 * cannot fit otherwise: then texts may go down to the marker alone.
 */
export const minimumShortenedChars = 256;

/** One text that was shortened: head and tail kept, the middle replaced by a marker. */
export interface ShortenedText {
  /** The message it belongs to. */
  readonly seq: number;
  /** Its index in the message's `parts`. */
  readonly partIndex: number;
  /** Its length before, in UTF-16 code units. */
  readonly originalChars: number;
  /** Head and tail kept, in UTF-16 code units. */
  readonly keptChars: number;
  /** Characters (code points) left out: the number the marker states. */
  readonly leftOutCharacters: number;
}

/** A message with its shortenable texts held to `maxChars`; `message` is the original when nothing changed. */
export interface ShortenedCopy {
  readonly maxChars: number;
  readonly message: ChatMessage;
  readonly shortened: readonly ShortenedText[];
}

/** The text that replaces the middle of a shortened text. */
export function leftOutMarker(characters: number): string {
  return `\n[... ${characters} characters left out ...]\n`;
}

/**
 * Whether a part of a message may be shortened: what the person sent and what tools returned (text and
 * tool-result parts of user and tool messages); never the model's own messages, never pictures.
 */
export function isShortenablePart(message: ChatMessage, part: MessagePart): part is TextPart | ToolResultPart {
  return message.role !== "assistant" && (part.type === "text" || part.type === "tool-result");
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** Where the head ends and the tail starts: about half each, at a line break when one is near, never inside a surrogate pair. */
function cutPoints(text: string, maxChars: number): { readonly headEnd: number; readonly tailStart: number } {
  const headChars = Math.ceil(maxChars / 2);
  let headEnd = headChars;
  let tailStart = text.length - (maxChars - headChars);
  const slack = maxChars >> 3;
  for (let index = headEnd - 1; index >= headEnd - slack && index > 0; index--) {
    if (text.charCodeAt(index) === 10) {
      headEnd = index + 1;
      break;
    }
  }
  for (let index = tailStart - 1; index < tailStart - 1 + slack && index < text.length - 1; index++) {
    if (index >= 0 && text.charCodeAt(index) === 10) {
      tailStart = index + 1;
      break;
    }
  }
  if (headEnd > 0 && isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd--;
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  return { headEnd, tailStart: Math.max(headEnd, tailStart) };
}

function countCodePoints(text: string, from: number, to: number): number {
  let count = to - from;
  for (let index = from + 1; index < to; index++) {
    if (isLowSurrogate(text.charCodeAt(index)) && isHighSurrogate(text.charCodeAt(index - 1))) count--;
  }
  return count;
}

/**
 * A text held to about `maxChars` UTF-16 code units: head and tail kept (about half each, cut at a line
 * break when one is within an eighth, never inside a surrogate pair), the middle replaced by
 * {@link leftOutMarker}, which states how many characters (code points) were left out. A text that is
 * not longer, or that the marker would not make shorter, comes back unchanged with `leftOutCharacters: 0`.
 */
export function shortenText(
  text: string,
  maxChars: number,
): { readonly text: string; readonly leftOutCharacters: number } {
  if (text.length <= maxChars) return { text, leftOutCharacters: 0 };
  const { headEnd, tailStart } = cutPoints(text, Math.max(0, Math.floor(maxChars)));
  const leftOutCharacters = countCodePoints(text, headEnd, tailStart);
  const marker = leftOutMarker(leftOutCharacters);
  if (headEnd + marker.length + (text.length - tailStart) >= text.length) return { text, leftOutCharacters: 0 };
  return { text: text.slice(0, headEnd) + marker + text.slice(tailStart), leftOutCharacters };
}

/** Tokens of `shortenText(text, maxChars)` or a little more, without building it: the planner's search runs this often. */
function shortenedTokensAtMost(text: string, maxChars: number, count: (text: string) => number): number {
  if (text.length <= maxChars) return count(text);
  const { headEnd, tailStart } = cutPoints(text, maxChars);
  // Code units ≥ code points, so this marker is at least as long as the real one.
  const marker = leftOutMarker(tailStart - headEnd);
  if (headEnd + marker.length + (text.length - tailStart) >= text.length) return count(text);
  return count(text.slice(0, headEnd)) + count(marker) + count(text.slice(tailStart));
}

/**
 * The message with every shortenable text (see {@link isShortenablePart}) held to `maxChars` by
 * {@link shortenText}; the model's own messages come back as they are. Never changes the message given:
 * a changed message is a new object. With a cache, the copy is made once and reused while `maxChars` stays.
 */
export function shortenMessage(message: ChatMessage, maxChars: number, cache?: EstimateCache): ShortenedCopy {
  const known = cache?.shortenedCopies.get(message);
  if (known !== undefined && known.maxChars === maxChars) return known;
  let parts: MessagePart[] | null = null;
  const shortened: ShortenedText[] = [];
  if (message.role !== "assistant") {
    message.parts.forEach((part, partIndex) => {
      if (!isShortenablePart(message, part) || part.text.length <= maxChars) return;
      const result = shortenText(part.text, maxChars);
      if (result.leftOutCharacters === 0) return;
      parts ??= [...message.parts];
      parts[partIndex] = { ...part, text: result.text };
      shortened.push({
        seq: message.seq,
        partIndex,
        originalChars: part.text.length,
        keptChars: result.text.length - leftOutMarker(result.leftOutCharacters).length,
        leftOutCharacters: result.leftOutCharacters,
      });
    });
  }
  const copy: ShortenedCopy = { maxChars, message: parts === null ? message : { ...message, parts }, shortened };
  cache?.shortenedCopies.set(message, copy);
  return copy;
}

/** Input of {@link shortenTurn}. */
export interface ShortenTurnInput {
  /** The turn's messages, as in the log (never changed). */
  readonly messages: readonly ChatMessage[];
  /** Estimated tokens the turn should fit in, not multiplied by the factor. */
  readonly targetTokens: number;
  /** Tokenizer family (see `modelFamily`). Default: the all-model table. */
  readonly family?: string;
  /** Reuses estimates and shortened copies. Default: a fresh cache. */
  readonly cache?: EstimateCache;
  /** The shortest a text gets while that is enough, in UTF-16 code units. Default {@link minimumShortenedChars}. */
  readonly minimumChars?: number;
}

/** What {@link shortenTurn} made of a turn. */
export interface ShortenTurnResult {
  /** The turn to send: shortened messages are new objects, the others the originals. */
  readonly messages: readonly ChatMessage[];
  /** The limit applied to every shortenable text of the turn; null when the turn already fit. */
  readonly maxChars: number | null;
  readonly shortened: readonly ShortenedText[];
  /** Estimated tokens of `messages` (not multiplied by the factor). */
  readonly tokens: number;
  /** Whether `tokens` ≤ `targetTokens`; false when even the shortest texts leave it bigger. */
  readonly fits: boolean;
}

/**
 * Shortens a turn that is bigger than `targetTokens`: its longest texts first (tool results and what the
 * person sent, never the model's own messages). It finds the largest limit in characters such that holding
 * every longer text to it makes the turn fit, so the longest texts lose most and short ones nothing.
 * Texts go below `minimumChars` only when the turn cannot fit otherwise, down to the marker alone; when
 * even that is not enough (the model's own messages are bigger), `fits` is false.
 */
export function shortenTurn(input: ShortenTurnInput): ShortenTurnResult {
  const cache = input.cache ?? createEstimateCache();
  const minimumChars = Math.max(0, Math.floor(input.minimumChars ?? minimumShortenedChars));
  const target = input.targetTokens;
  let total = 0;
  for (const message of input.messages) total += measureMessage(message, input.family, cache).tokens;
  if (total <= target) return { messages: input.messages, maxChars: null, shortened: [], tokens: total, fits: true };

  const count = (text: string) => cache.estimator(text, input.family);
  const texts: { readonly text: string; readonly tokens: number }[] = [];
  let longest = 0;
  for (const message of input.messages) {
    for (const part of message.parts) {
      if (!isShortenablePart(message, part)) continue;
      texts.push({ text: part.text, tokens: count(part.text) });
      longest = Math.max(longest, part.text.length);
    }
  }
  if (longest === 0) {
    return { messages: input.messages, maxChars: null, shortened: [], tokens: total, fits: false };
  }
  let fixed = total;
  for (const entry of texts) fixed -= entry.tokens;
  const tokensAt = (maxChars: number): number => {
    let tokens = fixed;
    for (const entry of texts) {
      tokens += entry.text.length <= maxChars ? entry.tokens : shortenedTokensAtMost(entry.text, maxChars, count);
    }
    return tokens;
  };

  // The largest limit that fits. Above the floor when possible; below it (down to the marker alone) only
  // when the floor is not enough, since a request the provider refuses helps nobody.
  // A turn of short texts only (a few hundred Chinese characters can fill a 512-token window) is shortened below
  // the floor when that makes it smaller: not when the marker is longer than what it stands for.
  if (longest <= minimumChars && tokensAt(0) >= total) {
    return { messages: input.messages, maxChars: null, shortened: [], tokens: total, fits: false };
  }
  let low = Math.min(minimumChars, longest);
  let high = longest - 1;
  if (tokensAt(low) > target) {
    high = low - 1;
    low = 0;
  }
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (tokensAt(middle) <= target) low = middle;
    else high = middle - 1;
  }
  const maxChars = low;
  const messages: ChatMessage[] = [];
  const shortened: ShortenedText[] = [];
  let tokens = 0;
  for (const message of input.messages) {
    const copy = shortenMessage(message, maxChars, cache);
    messages.push(copy.message);
    shortened.push(...copy.shortened);
    tokens += measureMessage(copy.message, input.family, cache).tokens;
  }
  return { messages, maxChars, shortened, tokens, fits: tokens <= target };
}

/**
 * The share of what is left of a held turn's room that one more message's texts are shortened to when they do
 * not fit all of it: a turn that keeps growing shortens its newest texts more and more and never has to touch
 * the ones already sent.
 */
export const turnRoomShare = 0.5;

/**
 * The share of a held turn's room kept for what can never be shortened (the model's messages, the markers,
 * short texts): texts are held to their share of the rest, so a long agent turn keeps fitting.
 */
export const turnReserveShare = 0.45;

/** The limit of a held turn whose texts are held only by its room (see {@link holdTurn}), not by a length of their own. */
export const heldByRoomOnly = Number.MAX_SAFE_INTEGER;

/** Input of {@link holdTurn}. */
export interface HoldTurnInput {
  /** The shortened turn's messages in order, as in the log (never changed). */
  readonly messages: readonly ChatMessage[];
  /** The turn's limit, fixed when it was first shortened (see `TextLimit`), in UTF-16 code units. */
  readonly maxChars: number;
  /** Estimated tokens the whole turn may use (the budget ÷ factor, less the summary), not × factor. */
  readonly roomTokens: number;
  /** Tokenizer family (see `modelFamily`). Default: the all-model table. */
  readonly family?: string;
  /** The chat's cache: each message's limit is found once, and its copy made once. */
  readonly cache: EstimateCache;
  /** Default {@link minimumShortenedChars}. */
  readonly minimumChars?: number;
  /** Default {@link turnRoomShare}. */
  readonly roomShare?: number;
  /** Default {@link turnReserveShare}. */
  readonly reserveShare?: number;
}

/** What {@link holdTurn} sends of a turn. */
export interface HeldTurn {
  /** The turn to send: shortened messages are new objects, the others the originals. */
  readonly messages: readonly ChatMessage[];
  readonly shortened: readonly ShortenedText[];
  /** Estimated tokens of `messages` (not × factor). */
  readonly tokens: number;
}

/** The largest limit in [low, high] at which the texts' tokens stay within `allowed`, or null when none does. */
function largestLimitWithin(
  low: number,
  high: number,
  allowed: number,
  tokensAt: (maxChars: number) => number,
): number | null {
  if (high < low || tokensAt(low) > allowed) return null;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (tokensAt(middle) <= allowed) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * The limit of one message of a held turn: the turn's limit while its texts at that limit fit the room the
 * messages before it left (`left`); else the largest that takes at most {@link turnRoomShare} of it
 * (`allowed`), below the floor (down to the marker alone) only when the floor takes more than that.
 */
function messageLimit(
  message: ChatMessage,
  maxChars: number,
  left: number,
  allowed: number,
  minimumChars: number,
  family: string | undefined,
  cache: EstimateCache,
): number {
  const known = cache.heldLimits.get(message);
  if (known !== undefined && known.maxChars === maxChars && known.left === left && known.family === family) {
    return known.limit;
  }
  const count = (text: string) => cache.estimator(text, family);
  const texts: string[] = [];
  let fixed = measureMessage(message, family, cache).tokens;
  for (const part of message.parts) {
    if (!isShortenablePart(message, part) || part.text.length <= minimumChars) continue;
    texts.push(part.text);
    fixed -= count(part.text);
  }
  let limit = maxChars;
  if (texts.length > 0) {
    const tokensAt = (chars: number): number => {
      let tokens = fixed;
      for (const text of texts) tokens += shortenedTokensAtMost(text, chars, count);
      return tokens;
    };
    let longest = 0;
    for (const text of texts) longest = Math.max(longest, text.length);
    const high = Math.min(maxChars, longest);
    const floor = Math.min(minimumChars, high);
    if (tokensAt(high) > left) {
      limit =
        largestLimitWithin(floor, high, allowed, tokensAt) ?? largestLimitWithin(0, floor - 1, allowed, tokensAt) ?? 0;
    }
  }
  cache.heldLimits.set(message, { maxChars, left, family, limit });
  return limit;
}

/**
 * A held turn as it is sent, cache-stable: each message's texts are held to the turn's limit while they fit the
 * room the messages before it left (after {@link turnReserveShare}), else shortened to {@link turnRoomShare} of
 * that room, head and tail kept. What a
 * message is sent as depends only on the messages before it, the limit and the room, so the bytes already
 * sent never change as the turn grows; its newest texts are shortened first, and more as room runs out.
 * The model's own messages are never changed. The turn may still outgrow its room (the model's messages
 * alone, or every new text down to its marker): then the caller sets a new limit.
 */
export function holdTurn(input: HoldTurnInput): HeldTurn {
  const { cache, family, maxChars, roomTokens } = input;
  const share = input.roomShare ?? turnRoomShare;
  const open = roomTokens * (1 - (input.reserveShare ?? turnReserveShare));
  const minimumChars = Math.max(0, Math.floor(input.minimumChars ?? minimumShortenedChars));
  const messages: ChatMessage[] = [];
  const shortened: ShortenedText[] = [];
  let tokens = 0;
  for (const message of input.messages) {
    let sent = message;
    if (message.role !== "assistant") {
      const left = Math.max(0, open - tokens);
      const limit = messageLimit(message, maxChars, left, share * left, minimumChars, family, cache);
      const copy = shortenMessage(message, limit, cache);
      sent = copy.message;
      if (copy.shortened.length > 0) shortened.push(...copy.shortened);
    }
    messages.push(sent);
    tokens += measureMessage(sent, family, cache).tokens;
  }
  return { messages, shortened, tokens };
}
