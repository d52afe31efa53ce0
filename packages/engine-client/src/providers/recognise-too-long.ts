import { refusalText } from "./refusal-text.js";
import {
  notTooLongAnywhere,
  otherLimitInSentence,
  perMinuteLimit,
  providerSentences,
  type RefusalNumbers,
  requestReaders,
  toCount,
  tooLongSentences,
  windowReaders,
} from "./too-long-wordings.js";

/** A "too long" refusal, as read from a provider's words. */
export interface TooLongRefusal {
  /** The window the refusal names, when it names one (the limit the provider actually applied). */
  readonly window?: number;
  /**
   * `output` when the refusal shows the prompt alone fits (`inputTokens < window`) and the output
   * reservation (`max_tokens`) pushed it over: lowering the answer room to `window - inputTokens` may be
   * enough. `input` when the prompt itself is over, or the refusal does not say.
   */
  readonly cause: "input" | "output";
  /** The prompt tokens the refusal reports, when it reports them. */
  readonly inputTokens?: number;
  /** The output reservation the refusal reports, when it reports it. */
  readonly outputTokens?: number;
}

/** The sentence around a match: from the last boundary before it to the next one after it. */
function sentenceAround(text: string, start: number, end: number): string {
  const before = text.slice(0, start);
  const boundaryBefore = Math.max(before.lastIndexOf(". "), before.lastIndexOf(" | "), before.lastIndexOf("? "));
  const after = text.slice(end);
  const stops = [after.indexOf(". "), after.indexOf(" | ")].filter((index) => index >= 0);
  const boundaryAfter = stops.length > 0 ? end + Math.min(...stops) : text.length;
  return text.slice(Math.max(0, boundaryBefore), boundaryAfter);
}

const tooLongSentencesGlobal = tooLongSentences.map((pattern) => new RegExp(pattern.source, `${pattern.flags}g`));

/** Whether some "too long" sentence in the text is about the request's size, not about another limit. */
function saysTooLong(provider: string, text: string): boolean {
  for (const pattern of tooLongSentencesGlobal) {
    for (const match of text.matchAll(pattern)) {
      const start = match.index ?? 0;
      if (!otherLimitInSentence.test(sentenceAround(text, start, start + match[0].length))) return true;
    }
  }
  return providerSentences.some((row) => (row.only as readonly string[]).includes(provider) && row.pattern.test(text));
}

function readNumbers(text: string): RefusalNumbers {
  const numbers: RefusalNumbers = {};
  for (const reader of windowReaders) {
    const match = reader.pattern.exec(text);
    if (!match) continue;
    const read = reader.read(match);
    if (read.window === undefined) continue;
    numbers.window = read.window;
    numbers.inputTokens = read.inputTokens;
    numbers.outputTokens = read.outputTokens;
    break;
  }
  if (numbers.inputTokens === undefined) {
    for (const reader of requestReaders) {
      const match = reader.pattern.exec(text);
      if (!match) continue;
      const read = reader.read(match);
      if (read.inputTokens === undefined && read.outputTokens === undefined) continue;
      numbers.inputTokens = read.inputTokens;
      numbers.outputTokens ??= read.outputTokens;
      break;
    }
  }
  return numbers;
}

function causeOf(numbers: RefusalNumbers): "input" | "output" {
  const { window, inputTokens, outputTokens } = numbers;
  if (window === undefined || inputTokens === undefined || !outputTokens) return "input";
  return inputTokens < window ? "output" : "input";
}

function refusal(numbers: RefusalNumbers): TooLongRefusal {
  return {
    ...(numbers.window !== undefined && { window: numbers.window }),
    cause: causeOf(numbers),
    ...(numbers.inputTokens !== undefined && { inputTokens: numbers.inputTokens }),
    ...(numbers.outputTokens !== undefined && { outputTokens: numbers.outputTokens }),
  };
}

/**
 * Recognises a "too long" refusal in any provider's words. Returns `null` when the body is not one, or the
 * refusal with the window it names (when it names one) and whether the output reservation caused it.
 *
 * One classifier for every provider: it reads the body's text (every string field of a JSON body, envelopes
 * of gateways and SDKs included, or the raw text) for sentences that say the request does not fit, and reads
 * the window from any phrasing that names one. `provider` (a row id such as `openai`, `zhipu`, or anything
 * else) only adds the few wordings one provider means alone. Not "too long": a throttle on use over time, a
 * quota, credits, bytes, a picture, or `max_tokens` above the output cap. But one request bigger than a
 * per-minute limit (`Limit 30000, Requested 30601`) can never pass as sent: it is "too long", with that
 * limit as the window. An input cap (`must have less than N tokens`, `[1, N]`) is a window for the input.
 *
 * `status` may be 200: refusals arrive inside successful responses too. A 402 is never "too long"; a 429 only
 * when it is the per-minute case above. `body` is the raw text (JSON, a Python repr, a log line) or a value.
 */
export function recogniseTooLong(
  provider: string,
  status: number | null | undefined,
  body: unknown,
): TooLongRefusal | null {
  if (status === 402) return null;
  const text = refusalText(body);
  if (text === "") return null;
  const perMinute = perMinuteLimit.exec(text);
  if (perMinute) {
    const limit = toCount(perMinute[1]);
    const requested = toCount(perMinute[2]);
    if (limit === undefined || requested === undefined || requested <= limit) return null;
    return refusal({ window: limit, inputTokens: requested });
  }
  if (status === 429) return null;
  if (notTooLongAnywhere.some((pattern) => pattern.test(text))) return null;
  if (!saysTooLong(provider, text)) return null;
  return refusal(readNumbers(text));
}
