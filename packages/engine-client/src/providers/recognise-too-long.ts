import type { ProviderId } from "./provider-adapter.js";

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

interface Numbers {
  window?: number | undefined;
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
}

/** One wording of a "too long" refusal. */
interface TooLongPhrasing {
  /** Providers whose bodies showed this wording (for the docs table; gateways relay any of them). */
  readonly seenFrom: readonly string[];
  /** When set, the wording only counts for these providers (a bare code that means other things elsewhere). */
  readonly only?: readonly ProviderId[];
  readonly pattern: RegExp;
  readonly read?: (match: RegExpMatchArray, text: string) => Numbers;
}

// A count as providers print it: 131072 or 131,072.
const N = String.raw`(\d{1,3}(?:,\d{3})+|\d+)`;
const quote = "[`'\"]?";

function toNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number.parseInt(text.replace(/,/g, ""), 10);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** A numeric JSON-ish field (`"n_ctx":8192`, `n_ctx: 4096`), never a longer name such as `n_ctx_train`. */
function field(text: string, name: string): number | undefined {
  const match = new RegExp(String.raw`(?<![\w])${name}${quote}\s*[:=]\s*${N}`, "i").exec(text);
  return toNumber(match?.[1]);
}

const termPattern = new RegExp(String.raw`${N}\s+(?:in|of)\s+(?:the\s+)?([a-z ]+)`, "i");

/** `(64 in the messages, 730 in the functions, and 800 in the completion)`: prompt terms and output terms. */
function readTerms(terms: string): Numbers {
  let input: number | undefined;
  let output: number | undefined;
  for (const term of terms.split(/,|\band\b/)) {
    const match = termPattern.exec(term.trim());
    const count = toNumber(match?.[1]);
    const label = match?.[2];
    if (count === undefined || label === undefined) continue;
    if (/completion|output/i.test(label)) output = (output ?? 0) + count;
    else input = (input ?? 0) + count;
  }
  return { inputTokens: input, outputTokens: output };
}

const resultedPattern = new RegExp(`(?:messages|prompt) resulted in ${N} tokens`, "i");
const requestedPattern = new RegExp(String.raw`you requested (?:about )?${N} tokens \(([^)]*)\)`, "i");
const hasPattern = new RegExp(`request has ${N} input tokens(?: plus ${N} ${quote}max_tokens)?`, "i");

function readOpenAIStyle(text: string): Numbers {
  const resulted = resultedPattern.exec(text);
  if (resulted) return { inputTokens: toNumber(resulted[1]) };
  const requested = requestedPattern.exec(text);
  if (requested?.[2]) return readTerms(requested[2]);
  const has = hasPattern.exec(text);
  if (has) return { inputTokens: toNumber(has[1]), outputTokens: toNumber(has[2]) };
  return {};
}

/**
 * The wordings, most specific first. Every one was seen in a real body (`data/provider-errors/bodies.json`),
 * except the generic ones at the end, which are the common phrasings of OpenAI-compatible servers.
 */
const phrasings: readonly TooLongPhrasing[] = [
  {
    // Structured fields before text: llama-server's own error type, also relayed by Ollama as a string.
    seenFrom: ["llama.cpp", "ollama"],
    pattern: /exceed_context_size_error|exceeds the available context size/i,
    read: (_match, text) => {
      const sentence = new RegExp(
        String.raw`request \(${N} tokens\) exceeds the available context size \(${N} tokens\)`,
        "i",
      ).exec(text);
      return {
        window: field(text, "n_ctx") ?? toNumber(sentence?.[2]),
        inputTokens: field(text, "n_prompt_tokens") ?? toNumber(sentence?.[1]),
      };
    },
  },
  {
    seenFrom: ["openai", "deepseek", "vllm", "openrouter"],
    pattern: new RegExp(`(?:model's|endpoint's|model) maximum context length is ${N}`, "i"),
    read: (match, text) => ({ window: toNumber(match[1]), ...readOpenAIStyle(text) }),
  },
  {
    // SGLang, relayed by OpenRouter and other hosts.
    seenFrom: ["openrouter"],
    pattern: new RegExp(`maximum context length of ${N} tokens`, "i"),
    read: (match, text) => {
      const split = new RegExp(`${N} tokens from the input messages and ${N} tokens for the completion`, "i").exec(
        text,
      );
      return { window: toNumber(match[1]), inputTokens: toNumber(split?.[1]), outputTokens: toNumber(split?.[2]) };
    },
  },
  {
    seenFrom: ["together"],
    pattern: /The input \((\S+) tokens\) is longer than the model's context length \((\S+) tokens\)/i,
    read: (match) => ({ window: toNumber(match[2]), inputTokens: toNumber(match[1]) }),
  },
  {
    seenFrom: ["anthropic"],
    pattern: new RegExp(`prompt is too long: ${N} tokens > ${N} maximum`, "i"),
    read: (match) => ({ window: toNumber(match[2]), inputTokens: toNumber(match[1]) }),
  },
  {
    seenFrom: ["anthropic"],
    pattern: new RegExp(
      String.raw`input length and ${quote}max_tokens${quote} exceed context limit: ${N} \+ ${N} > ${N}`,
      "i",
    ),
    read: (match) => ({
      window: toNumber(match[3]),
      inputTokens: toNumber(match[1]),
      outputTokens: toNumber(match[2]),
    }),
  },
  {
    seenFrom: ["google"],
    pattern: new RegExp(
      String.raw`input token count \(${N}\) exceeds the maximum number of tokens allowed \(${N}\)`,
      "i",
    ),
    read: (match) => ({ window: toNumber(match[2]), inputTokens: toNumber(match[1]) }),
  },
  {
    seenFrom: ["mistral"],
    pattern: new RegExp(
      `Prompt contains ${N} tokens(?: and ${N} draft tokens)?,? too large for model with ${N} maximum context length`,
      "i",
    ),
    read: (match) => ({ window: toNumber(match[3]), inputTokens: toNumber(match[1]) }),
  },
  {
    seenFrom: ["xai"],
    pattern: new RegExp(`maximum prompt length is ${N} but the request contains ${N} tokens`, "i"),
    read: (match) => ({ window: toNumber(match[1]), inputTokens: toNumber(match[2]) }),
  },
  {
    seenFrom: ["xai"],
    pattern: new RegExp(String.raw`Current message \(${N} tokens\) exceeds budget \(${N} tokens\)`, "i"),
    read: (match) => ({ window: toNumber(match[2]), inputTokens: toNumber(match[1]) }),
  },
  {
    // Text Generation Inference validation, as Together printed it.
    seenFrom: ["together"],
    pattern: new RegExp(
      String.raw`${quote}inputs${quote} tokens \+ ${quote}max_new_tokens${quote} must be <= ${N}\.? Given: ${N} ${quote}inputs${quote} tokens and ${N}`,
      "i",
    ),
    read: (match) => ({
      window: toNumber(match[1]),
      inputTokens: toNumber(match[2]),
      outputTokens: toNumber(match[3]),
    }),
  },
  {
    seenFrom: ["lmstudio"],
    pattern: new RegExp(String.raw`n_keep:\s*${N}\s*>=?\s*n_ctx:\s*${N}`, "i"),
    read: (match) => ({ window: toNumber(match[2]), inputTokens: toNumber(match[1]) }),
  },
  {
    seenFrom: ["lmstudio"],
    pattern: new RegExp(`loaded with context length of only ${N} tokens`, "i"),
    read: (match, text) => ({
      window: toNumber(match[1]),
      inputTokens: toNumber(new RegExp(`keep the first ${N} tokens`, "i").exec(text)?.[1]),
    }),
  },
  {
    seenFrom: ["lmstudio"],
    pattern: new RegExp(`Reached context length of ${N} tokens`, "i"),
    read: (match) => ({ window: toNumber(match[1]) }),
  },
  {
    // Ollama's silent truncation, as its server log says it; the number after `limit=` is the window.
    seenFrom: ["ollama"],
    pattern: new RegExp(`truncating input prompt.{0,40}?limit=${N}`, "i"),
    read: (match, text) => ({
      window: toNumber(match[1]),
      inputTokens: toNumber(new RegExp(String.raw`\bprompt=${N}`, "i").exec(text)?.[1]),
    }),
  },
  // The number in Ollama Cloud's refusal is the excess ("by N tokens"), not the window.
  { seenFrom: ["ollama"], pattern: /prompt too long; exceeded max context length/i },
  { seenFrom: ["ollama"], pattern: /input length exceeds the context length/i },
  // Older vLLM computed `max_model_len - prompt` as max_tokens: a negative one is a prompt over the window.
  { seenFrom: ["vllm"], pattern: /max_tokens must be at least 1, got -\d/i },
  { seenFrom: ["zhipu"], pattern: /Prompt exceeds max length|Prompt 超长/i },
  // Zhipu's business code for "Prompt 超长"; a bare number means other things elsewhere.
  { seenFrom: ["zhipu"], only: ["zhipu"], pattern: /(?<![\d.])1261(?![\d.])/ },
  { seenFrom: ["zhipu"], pattern: /model_context_window_exceeded/i },
  // Generic phrasings of OpenAI-compatible servers (Groq, OpenAI Responses, Cerebras, Bedrock, ...).
  { seenFrom: ["openai", "groq"], pattern: /context_length_exceeded|Please reduce the length of the messages/i },
  {
    seenFrom: [],
    pattern: new RegExp(`Current length is ${N} while limit is ${N}`, "i"),
    read: (match) => ({ window: toNumber(match[2]), inputTokens: toNumber(match[1]) }),
  },
  {
    seenFrom: ["openai"],
    pattern:
      /(?:input|prompt|request|messages?|conversation) (?:is too long|exceeds? (?:the )?(?:model's |maximum )*context (?:length|window|size))|context (?:length|window) (?:exceeded|overflow)|Input is too long for requested model/i,
  },
];

/**
 * Near misses: refusals that look like "too long" but are not, so a window must not be learned from them.
 * Checked before any wording: tokens-per-minute limits (Groq sends them as HTTP 413), the output cap
 * (`max_tokens` too large), credit and key limits, and the bytes or pixels of a picture.
 */
const nearMisses: readonly RegExp[] = [
  /tokens per min|\bTPM\b|\brate[ _-]?limit/i,
  /RESOURCE_EXHAUSTED|\bquota\b/i,
  new RegExp(
    String.raw`\b(?:max_tokens|max_completion_tokens|max_new_tokens)${quote}\s*(?:is too large|must be less than|cannot be greater|:\s*\d+\s*>)`,
    "i",
  ),
  /max_tokens=\d+\s*cannot be greater|valid range of max_tokens|maximum allowed number of output tokens/i,
  /completion tokens, whereas you provided/i,
  /more credits|can only afford|insufficient[_ ]credits|credit balance/i,
  /higher monthly limit|settings\/keys/i,
  /\bimages?\b|\bpixels?\b|\bbytes\b/i,
];

/** A body as one line of plain text: escapes of relayed JSON undone, line breaks folded. */
function normalise(body: unknown): string {
  let raw: string;
  if (typeof body === "string") raw = body;
  else {
    try {
      raw = JSON.stringify(body) ?? "";
    } catch {
      raw = String(body);
    }
  }
  return raw
    .replace(/\\+(["'`])/g, "$1")
    .replace(/\\[nrt]/g, " ")
    .replace(/\s+/g, " ");
}

function causeOf(numbers: Numbers): "input" | "output" {
  const { window, inputTokens, outputTokens } = numbers;
  if (window === undefined || inputTokens === undefined || !outputTokens) return "input";
  return inputTokens < window ? "output" : "input";
}

/**
 * Recognises a "too long" refusal in a provider's words. Returns `null` when the body is not one, or the
 * refusal with the window it names (when it names one) and whether the output reservation caused it.
 *
 * `provider` is a row id (`openai`, `anthropic`, `llama.cpp`, ...); any other id gets every wording this
 * library knows. `status` may be 200: refusals arrive inside successful responses too (an SSE `error`
 * event, OpenRouter's in-body error, `finish_reason: "model_context_window_exceeded"`). `body` is the raw
 * text (JSON, a Python repr, a log line) or an already parsed value.
 */
export function recogniseTooLong(
  provider: string,
  status: number | null | undefined,
  body: unknown,
): TooLongRefusal | null {
  // A rate limit or a payment request is never about the window, whatever its words.
  if (status === 429 || status === 402) return null;
  const text = normalise(body);
  if (text.trim() === "") return null;
  if (nearMisses.some((pattern) => pattern.test(text))) return null;
  for (const phrasing of phrasings) {
    if (phrasing.only && !(phrasing.only as readonly string[]).includes(provider)) continue;
    const match = phrasing.pattern.exec(text);
    if (!match) continue;
    const numbers = phrasing.read?.(match, text) ?? {};
    return {
      ...(numbers.window !== undefined && { window: numbers.window }),
      cause: causeOf(numbers),
      ...(numbers.inputTokens !== undefined && { inputTokens: numbers.inputTokens }),
      ...(numbers.outputTokens !== undefined && { outputTokens: numbers.outputTokens }),
    };
  }
  return null;
}
