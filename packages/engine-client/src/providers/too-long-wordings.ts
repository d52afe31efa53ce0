import type { ProviderId } from "./provider-adapter.js";

/** The numbers a refusal may name. */
export interface RefusalNumbers {
  window?: number | undefined;
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
}

// A count as providers print it: 131072, 131,072 or 131_072.
const N = String.raw`(\d{1,3}(?:[,_]\d{3})+|\d+)`;
const Q = "[`'\"]?";

export function toCount(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number.parseInt(text.replace(/[,_]/g, ""), 10);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/**
 * Sentences that say a request does not fit, by what the words mean rather than by who says them: a subject
 * (the prompt, the input, the request, its tokens) that exceeds, is longer than or too large for an object
 * (the context length, window or size, a model or token limit, a maximum length). Every family seen in real
 * bodies has one of these shapes; `test-fixtures/refusals/` holds the bodies.
 */
export const tooLongSentences: readonly RegExp[] = [
  // "... exceeds / is longer than / exceeded ... the (model's | available | maximum) context length|window|size".
  /\b(?:exceed(?:s|ed|ing)?|is longer than|longer than|greater than|too (?:long|large|big) for|over)\b[^.|]{0,60}?\b(?:(?:the |this |its |your )?(?:model'?s? |models? |available |maximum |max |allowed |configured |requested |current )*(?:context(?:[ _-](?:length|window|size|limit))|(?:model|prompt|input|sequence|decoder) (?:token )?(?:length|limit)|token limit|max(?:imum)? (?:context |prompt |input |allowed )?length|max(?:imum)? number of tokens|context\b))/i,
  // "prompt is too long", "Input is too long for requested model", "context_length_exceeded", "Context size has
  // been exceeded", "context window exceeds limit", "model max length exceeded", "input length is too long".
  /\b(?:context|prompt|input|inputs|decoder prompt|messages?|conversation)[ _-]?(?:length|window|size|tokens?|token length)?[ _-]?(?:is |was |has been |have been )?(?:too long|too large|exceeded|exceeds? (?:the |its )?(?:limit|maximum)|overflow(?:ed|s)?)\b/i,
  // "<a count of tokens> exceeds the limit|maximum|context ...": Copilot, Gemini, Azure, llama-cpp-python.
  new RegExp(
    String.raw`\b(?:tokens?|token count|length)\b(?: of ${N}| \(${N}(?: tokens)?\))?\s+exceed(?:s|ed)?\b[^.|]{0,40}?\b(?:limit|maximum|max|context|window|budget)\b`,
    "i",
  ),
  /maximum context length (?:is|of|has been exceeded)|reduce the length of the (?:messages|input|prompt)/i,
  // "maximum prompt length is N but the request contains M", "Current length is N while limit is M".
  new RegExp(
    String.raw`\b(?:max(?:imum)?|current) (?:prompt |context |input |model )?length is ${N}(?: tokens)?,? (?:but|while|however)\b`,
    "i",
  ),
  // A local server's own sentence: "loaded with context length of only N tokens, which is not enough".
  new RegExp(String.raw`context (?:length|window|size) of only ${N}|\bcontext\b[^.|]{0,12}\boverflows\b`, "i"),
  // Input caps of local servers and clouds: TGI, DashScope.
  new RegExp(
    String.raw`\binputs?${Q}\s*(?:tokens\s*)?(?:\+\s*${Q}max_new_tokens${Q}\s*)?must (?:be <=?|be less than|have less than)|\binput length should be \[`,
    "i",
  ),
  // The server's own parameters: LM Studio/llama.cpp's n_keep against n_ctx; older vLLM's negative max_tokens
  // (max_model_len minus a prompt that is over it).
  new RegExp(String.raw`n_keep${Q}?\s*[:=]?\s*${N}\s*>=?\s*n_ctx|max_tokens must be at least 1, got -\d`, "i"),
  /exceed_context_size_error|Reached context length of|model_context_window_exceeded|model_max_prompt_tokens_exceeded/i,
  // Ollama's silent truncation, in its log line.
  /truncating input prompt/i,
];

/** Wordings that count only for one provider: a bare code that means other things elsewhere. */
export const providerSentences: readonly { readonly only: readonly ProviderId[]; readonly pattern: RegExp }[] = [
  // Zhipu's business code for "Prompt 超长".
  { only: ["zhipu"], pattern: /(?<![\d.])1261(?![\d.])|Prompt 超长/ },
];

/**
 * Words that, in the same sentence as a "too long" wording, make it about something else: use over time, a
 * quota, bytes or a picture's size. Elsewhere in the body they hide nothing.
 */
export const otherLimitInSentence =
  /\bper (?:min(?:ute)?|hour|day)\b|\bTPM\b|\bRPM\b|\brate[ _-]?limit|time frame|\bquota\b|\bbytes?\b|\bMB\b|\bpixels?\b|\bimages?\b|\bbody size\b|\bcredits?\b/i;

/**
 * Refusals that are never "too long", wherever they sit in the body: the output reservation above the
 * model's output cap (lowering `max_tokens` fixes it, folding cannot), and credit or key-spend limits.
 */
export const notTooLongAnywhere: readonly RegExp[] = [
  new RegExp(
    String.raw`\b(?:max_tokens|max_completion_tokens|max_new_tokens|max_output_tokens)${Q}\s*(?:is too large|must be less than|cannot be greater|:\s*\d+\s*>)`,
    "i",
  ),
  /max_tokens=\d+\s*cannot be greater|valid range of max_tokens|range of max_tokens should be|maximum allowed number of output tokens/i,
  /completion tokens, whereas you provided|maximum tokens you requested exceeds/i,
  /more credits|can only afford|insufficient[_ ]credits|credit balance|higher monthly limit|settings\/keys/i,
];

/** A per-minute limit and this request's size: `Limit 30000, Requested 30601` (OpenAI, Groq). */
export const perMinuteLimit = new RegExp(
  String.raw`(?:tokens per min(?:ute)?|\bTPM\b)[^|]{0,80}?\bLimit:?\s*${N}[^|]{0,40}?\bRequested:?\s*${N}`,
  "i",
);

interface NumberReader {
  readonly pattern: RegExp;
  readonly read: (match: RegExpMatchArray) => RefusalNumbers;
}

const windowOf =
  (group: number, input?: number, output?: number) =>
  (match: RegExpMatchArray): RefusalNumbers => ({
    window: toCount(match[group]),
    inputTokens: input === undefined ? undefined : toCount(match[input]),
    outputTokens: output === undefined ? undefined : toCount(match[output]),
  });

/** Phrasings that name the window (and sometimes the request), most specific first. */
export const windowReaders: readonly NumberReader[] = [
  // Structured fields: llama-server's n_ctx (never n_ctx_train), with its prompt count.
  { pattern: new RegExp(String.raw`(?<![\w])n_ctx${Q}\s*[:=]\s*${N}`, "i"), read: windowOf(1) },
  {
    pattern: new RegExp(String.raw`exceed context limit: ${N} \+ ${N} > ${N}`, "i"),
    read: (match) => ({
      window: toCount(match[3]),
      inputTokens: toCount(match[1]),
      outputTokens: toCount(match[2]),
    }),
  },
  {
    pattern: new RegExp(String.raw`${N} tokens > ${N} maximum`, "i"),
    read: windowOf(2, 1),
  },
  {
    pattern: new RegExp(
      String.raw`${Q}inputs${Q} tokens \+ ${Q}max_new_tokens${Q} must be <=? ${N}\.? Given: ${N} ${Q}inputs${Q} tokens and ${N}`,
      "i",
    ),
    read: windowOf(1, 2, 3),
  },
  { pattern: new RegExp(`too large for model with ${N} maximum context length`, "i"), read: windowOf(1) },
  { pattern: new RegExp(`maximum prompt length is ${N}`, "i"), read: windowOf(1) },
  { pattern: new RegExp(String.raw`exceeds budget \(${N} tokens\)`, "i"), read: windowOf(1) },
  {
    pattern: new RegExp(
      String.raw`(?:context (?:length|size|window)|allowed length|context) \(${N}(?: tokens)?\)`,
      "i",
    ),
    read: windowOf(1),
  },
  {
    pattern: new RegExp(
      String.raw`(?:context (?:length|window|size)|model length|prompt length|input length|max(?:imum)? length)(?: is| of(?: only)?|:)\s*${N}`,
      "i",
    ),
    read: windowOf(1),
  },
  { pattern: new RegExp(String.raw`maximum number of tokens allowed \(${N}\)`, "i"), read: windowOf(1) },
  { pattern: new RegExp(`(?:model )?token limit:? ${N}`, "i"), read: windowOf(1) },
  {
    pattern: new RegExp(String.raw`(?:exceeds? the limit of|configured limit of|limit is|\blimit=)\s*${N}`, "i"),
    read: windowOf(1),
  },
  { pattern: new RegExp(String.raw`must (?:be <=?|be less than|have less than)\s*${N}`, "i"), read: windowOf(1) },
  { pattern: new RegExp(String.raw`input length should be \[\s*1\s*,\s*${N}\s*\]`, "i"), read: windowOf(1) },
];

const termPattern = new RegExp(String.raw`${N}\s+(?:in|of)\s+(?:the\s+)?([a-z ]+)`, "i");

/** `(64 in the messages, 730 in the functions, and 800 in the completion)`: prompt terms and output terms. */
function readTerms(terms: string): RefusalNumbers {
  let input: number | undefined;
  let output: number | undefined;
  for (const term of terms.split(/,|\band\b/)) {
    const match = termPattern.exec(term.trim());
    const count = toCount(match?.[1]);
    const label = match?.[2];
    if (count === undefined || label === undefined) continue;
    if (/completion|output/i.test(label)) output = (output ?? 0) + count;
    else input = (input ?? 0) + count;
  }
  return { inputTokens: input, outputTokens: output };
}

/** Phrasings that name what the request held, most specific first. */
export const requestReaders: readonly NumberReader[] = [
  {
    pattern: new RegExp(String.raw`you requested (?:about |a total of )?${N} tokens ?[(:]([^)|]*)`, "i"),
    read: (match) => readTerms(match[2] ?? ""),
  },
  {
    pattern: new RegExp(`${N} tokens from the input messages and ${N} tokens for the completion`, "i"),
    read: (match) => ({ inputTokens: toCount(match[1]), outputTokens: toCount(match[2]) }),
  },
  {
    pattern: new RegExp(`request has ${N} input tokens(?: plus ${N} ${Q}max_tokens)?`, "i"),
    read: (match) => ({ inputTokens: toCount(match[1]), outputTokens: toCount(match[2]) }),
  },
  {
    pattern: new RegExp(String.raw`(?<![\w])n_prompt_tokens${Q}\s*[:=]\s*${N}`, "i"),
    read: (m) => ({ inputTokens: toCount(m[1]) }),
  },
  {
    pattern: new RegExp(
      String.raw`(?:resulted in|request contains|Prompt contains|token count of|token count \(|Requested tokens \(|request \(|input \(|Input length \(|prompt \(length |prompt=|requested:)\s*${N}`,
      "i",
    ),
    read: (match) => ({ inputTokens: toCount(match[1]) }),
  },
];
