import { refusalText } from "./refusal-text.js";
import {
  contextWord,
  countPattern,
  excessWord,
  limitWord,
  moneyLimitAnywhere,
  type NumberRole,
  otherLimitInSentence,
  outputCapMarker,
  outputCapParameter,
  perMinuteLimit,
  type RefusalNumbers,
  requestReaders,
  roleWords,
  sizeSubject,
  throttleAnywhere,
  toCount,
  tokenUnit,
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

/** Bare codes one provider alone means as "too long" (elsewhere the same digits mean other things). */
const providerCodes: readonly { readonly provider: string; readonly pattern: RegExp }[] = [
  // Zhipu's business code for "Prompt 超长".
  { provider: "zhipu", pattern: /(?<![\d.])1261(?![\d.])/ },
];

/**
 * The text as sentences are read: the output parameter replaced by one marker, identifiers split into
 * words (`context_length_exceeded`, `ContextWindowExceededError`), so that the lexicon reads words.
 */
function wordsOf(text: string): string {
  // A link's words (`error-code#token-limit`) are an address, not a statement.
  return text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, " ")
    .replace(outputCapParameter, ` ${outputCapMarker} `)
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/(?<=[A-Za-z])_+(?=[A-Za-z])/g, " ");
}

/** Sentences, and the parts of a body (` | `): a concept's words must meet inside one. */
function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])\s+(?=[\p{Lu}\p{Lo}[("'`{])|,\s(?!\d)|\s\|\s|[;\n。！？，]/u);
}

function positions(pattern: RegExp, sentence: string): number[] {
  const global = new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`);
  return [...sentence.matchAll(global)].map((match) => match.index ?? 0);
}

/** How far apart (characters) a subject and its excess or limit may stand and still be one statement. */
const nearChars = 100;

/** Negative room for the answer (`max_tokens must be at least 1, got -186`): the prompt alone is over. */
const negativeOutputRoom = new RegExp(String.raw`${outputCapMarker}[^|]{0,40}?(?:got|is|was|=|:)\s*-\d`);

type SentenceVerdict = "too-long" | "output-cap" | "other";

/**
 * One sentence's meaning: `output-cap` when the output parameter is what is over (no size subject before it),
 * `too-long` when a size subject stands near an excess or a limit and no other kind of limit is named.
 */
function judgeSentence(sentence: string): SentenceVerdict {
  const cap = sentence.indexOf(outputCapMarker);
  const bound = [...positions(excessWord, sentence), ...positions(limitWord, sentence)];
  if (bound.length === 0) return "other";
  const subjects = positions(sizeSubject, sentence);
  if (cap >= 0) {
    if (!subjects.some((at) => at < cap) && bound.some((at) => at > cap)) return "output-cap";
  }
  if (otherLimitInSentence.test(sentence)) return "other";
  const near = subjects.some((subject) => bound.some((at) => Math.abs(at - subject) <= nearChars));
  return near ? "too-long" : "other";
}

const countGlobal = new RegExp(countPattern, "gu");

/** The role of one number: what the words right after it say, else the nearest deciding words before it. */
function roleOf(sentence: string, start: number, end: number, previousEnd: number): NumberRole {
  const after = sentence.slice(end, end + 24);
  // `A tokens > B`, `A + B > C`, `A >= n_ctx`: the left side is what was sent.
  if (/^\s*(?:tokens?\s*)?\)?\s*(?:\+|>|≥)/i.test(after)) return "request";
  // `200000 maximum`, `131072 maximum context length`, `the 2048 tokens allowed`.
  if (/^\s*(?:tokens?\s*)?\)?\s*(?:maximum|max|allowed|limit)\b/i.test(after)) return "limit";
  // `[1, 30720]`: the upper end of a range is the bound.
  if (/\[\s*[01]\s*,\s*$/.test(sentence.slice(Math.max(0, start - 8), start))) return "limit";
  const before = sentence.slice(Math.max(previousEnd, start - 48), start);
  // A bare `(N)` after a limit is a code unless token words stand right beside it (`tokens allowed (N)`).
  if (/\(\s*$/.test(before) && !/^\s*(?:tokens?|токен|トークン|토큰)/i.test(after)) {
    const lastWords = before
      .replace(/\(\s*$/, "")
      .trim()
      .split(/\s+/)
      .slice(-2)
      .join(" ");
    if (!tokenUnit.test(lastWords)) return "neither";
  }
  let deciding: { role: NumberRole; end: number } | null = null;
  let noun = false;
  for (const { role, pattern } of roleWords) {
    for (const match of before.matchAll(new RegExp(pattern.source, `${pattern.flags}g`))) {
      if (role === "request-noun") {
        noun = true;
        continue;
      }
      const matchEnd = (match.index ?? 0) + match[0].length;
      if (!deciding || matchEnd > deciding.end || (matchEnd === deciding.end && role !== "request")) {
        deciding = { role, end: matchEnd };
      }
    }
  }
  return deciding?.role ?? (noun ? "request" : "neither");
}

/** The window: the first number in a "too long" sentence whose words make it the limit. */
function readWindow(sentences: readonly string[]): number | undefined {
  for (const sentence of sentences) {
    let previousEnd = 0;
    for (const match of sentence.matchAll(countGlobal)) {
      const start = match.index ?? 0;
      const end = start + match[0].length;
      const count = toCount(match[1]);
      if (count !== undefined && roleOf(sentence, start, end, previousEnd) === "limit") return count;
      previousEnd = end;
    }
  }
  return undefined;
}

/** The prompt and output counts a refusal reports, where it splits them. */
function readRequest(text: string): RefusalNumbers {
  for (const reader of requestReaders) {
    const match = reader.pattern.exec(text);
    if (!match) continue;
    const read = reader.read(match);
    if (read.inputTokens === undefined && read.outputTokens === undefined) continue;
    return read;
  }
  return {};
}

function refusal(numbers: RefusalNumbers): TooLongRefusal {
  const { window, inputTokens, outputTokens } = numbers;
  const cause = window !== undefined && inputTokens !== undefined && outputTokens && inputTokens < window;
  return {
    ...(window !== undefined && { window }),
    cause: cause ? "output" : "input",
    ...(inputTokens !== undefined && { inputTokens }),
    ...(outputTokens !== undefined && { outputTokens }),
  };
}

/**
 * Recognises a "too long" refusal in any provider's words. Returns `null` when the body is not one, or the
 * refusal with the window it names (when it names one) and whether the output reservation caused it.
 *
 * One rule for every provider and language, by concept: a sentence where a size subject (tokens, the
 * context, the prompt, the input, the messages; 上下文, トークン, 입력, contexto, Kontext, токены …) stands
 * near an excess (exceeds, too long, more than, overflows, `>`; 超过, 超え, 초과, dépasse, превышает …) or a
 * limit (the maximum, the window, a budget, `<=`, `[1, N]`; 上限, 最大, 한도, límite …). The body's text is
 * every string of a JSON body, envelopes of gateways and SDKs included. Not "too long": a sentence that
 * names another kind of limit (use over time, a quota or plan, money, bytes, a picture, a content policy),
 * and any body where the output parameter (`max_tokens`) is what is over. One request bigger than a
 * per-minute limit (`Limit 30000, Requested 30601`) can never pass as sent: it is "too long", with that
 * limit as the window. The window is the number the sentence's own words make the limit, whatever its
 * brackets, separators (131,072 / 131 072 / 131.072 / 128k) or order.
 *
 * `status` may be 200: refusals arrive inside successful responses too. A 402 is never "too long"; a 429 only
 * when it is the per-minute case above. `provider` only adds the bare codes one provider means alone.
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
  if (status === 429 || moneyLimitAnywhere.test(text)) return null;
  const textWords = wordsOf(text);
  if (negativeOutputRoom.test(textWords)) return refusal(readRequest(text));
  const verdicts = sentencesOf(textWords).map((sentence) => ({ sentence, verdict: judgeSentence(sentence) }));
  if (verdicts.some(({ verdict }) => verdict === "output-cap")) return null;
  const throttled = throttleAnywhere.test(textWords);
  const tooLong = verdicts
    .filter(({ verdict }) => verdict === "too-long")
    .map(({ sentence }) => sentence)
    .filter((sentence) => !throttled || contextWord.test(sentence) || readWindow([sentence]) !== undefined);
  const coded = providerCodes.some((row) => row.provider === provider && row.pattern.test(text));
  if (tooLong.length === 0 && !coded) return null;
  // The window may sit in the sentence after the one that says "too long" (`… exceeded. Limit is N.`).
  const window = readWindow(
    tooLong.length > 0
      ? [
          ...tooLong,
          ...verdicts
            .filter(({ sentence, verdict }) => verdict === "other" && !otherLimitInSentence.test(sentence))
            .map(({ sentence }) => sentence),
        ]
      : [],
  );
  return refusal({ ...readRequest(text), window });
}
