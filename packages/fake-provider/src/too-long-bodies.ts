import { loadProviderErrorBodies } from "./provider-error-bodies.js";

/** The numbers of a request that does not fit. */
export interface OverWindow {
  /** The window the server enforces. */
  readonly window: number;
  /** Tokens of the prompt, as the server counted them. */
  readonly inputTokens: number;
  /** The output reservation (`max_tokens`), 0 when none was asked or the provider does not count it. */
  readonly outputTokens: number;
}

/** A refusal as the fake server sends it. */
export interface FakeRefusalBody {
  readonly status: number;
  readonly body: string;
}

/** Replaces each pattern in a real body, and fails loudly if bodies.json no longer has the wording. */
function fill(index: number, replacements: readonly (readonly [RegExp, string])[]): string {
  const entry = loadProviderErrorBodies()[index];
  if (!entry) throw new Error(`bodies.json has no entry ${index}`);
  let body = entry.body;
  for (const [pattern, replacement] of replacements) {
    if (!pattern.test(body)) throw new Error(`bodies.json entry ${index} no longer matches ${pattern}`);
    body = body.replace(pattern, replacement);
  }
  return body;
}

/** Whether a provider counts the output reservation into its window check (so `max_tokens` can overflow). */
export function countsOutputInWindow(provider: string): boolean {
  return ["openai", "deepseek", "vllm", "openrouter", "anthropic"].includes(provider);
}

/**
 * A provider's real "too long" body (from bodies.json) with this request's numbers put in, or `null` when the
 * provider has no wording with numbers to fill (it then gets its first real too-long body verbatim).
 */
export function tooLongBodyFor(provider: string, numbers: OverWindow): FakeRefusalBody | null {
  const { window, inputTokens: input, outputTokens: output } = numbers;
  const total = input + output;
  const inputAlone = input > window || output === 0;
  switch (provider) {
    case "openai":
      return inputAlone
        ? {
            status: 400,
            body: fill(0, [
              [/maximum context length is \d+/, `maximum context length is ${window}`],
              [/resulted in \d+ tokens/, `resulted in ${input} tokens`],
            ]),
          }
        : {
            status: 400,
            body: fill(2, [
              [/maximum context length is \d+/, `maximum context length is ${window}`],
              [
                /requested \d+ tokens \(\d+ in the messages, \d+ in the completion\)/,
                `requested ${total} tokens (${input} in the messages, ${output} in the completion)`,
              ],
            ]),
          };
    case "deepseek":
      return {
        status: 400,
        body: fill(22, [
          [/maximum context length is \d+/, `maximum context length is ${window}`],
          [
            /requested \d+ tokens \(\d+ in the messages, \d+ in the completion\)/,
            `requested ${total} tokens (${input} in the messages, ${output} in the completion)`,
          ],
        ]),
      };
    case "xai":
      return {
        status: 400,
        body: fill(26, [
          [/length is \d+ but the request contains \d+/, `length is ${window} but the request contains ${input}`],
        ]),
      };
    case "together":
      return {
        status: 400,
        body: fill(32, [
          [/\(X tokens\)/, `(${input} tokens)`],
          [/\(Y tokens\)/, `(${window} tokens)`],
        ]),
      };
    case "mistral":
      return {
        status: 400,
        body: fill(18, [
          [/Prompt contains \d+ tokens/, `Prompt contains ${input} tokens`],
          [/model with \d+ maximum/, `model with ${window} maximum`],
        ]),
      };
    case "openrouter":
      return {
        status: 400,
        body: fill(44, [
          [/maximum context length is \d+/, `maximum context length is ${window}`],
          [
            /about \d+ tokens \(\d+ of text input, \d+ of tool input, \d+ in the output\)/,
            `about ${total} tokens (${input} of text input, 0 of tool input, ${output} in the output)`,
          ],
        ]),
      };
    case "vllm":
      return inputAlone
        ? {
            status: 400,
            body: fill(35, [
              [/maximum context length is \d+/, `maximum context length is ${window}`],
              [/has \d+ input tokens/, `has ${input} input tokens`],
              [/value=\d+/, `value=${input}`],
            ]),
          }
        : {
            status: 400,
            body: fill(33, [
              [/maximum context length is \d+/, `maximum context length is ${window}`],
              [
                /requested \d+ tokens \(\d+ in the messages, \d+ in the completion\)/,
                `requested ${total} tokens (${input} in the messages, ${output} in the completion)`,
              ],
            ]),
          };
    case "llama.cpp":
      return {
        status: 400,
        body: fill(39, [
          [/"n_prompt_tokens":\d+/, `"n_prompt_tokens":${input}`],
          [/"n_ctx":\d+/, `"n_ctx":${window}`],
        ]),
      };
    case "lmstudio":
      return {
        status: 400,
        body: fill(41, [[/n_keep: \d+>= n_ctx: \d+/, `n_keep: ${input}>= n_ctx: ${window}`]]),
      };
    case "anthropic":
      return inputAlone
        ? {
            status: 400,
            body: fill(8, [[/too long: \d+ tokens > \d+ maximum/, `too long: ${input} tokens > ${window} maximum`]]),
          }
        : {
            status: 400,
            body: fill(10, [[/limit: \d+ \+ \d+ > \d+/, `limit: ${input} + ${output} > ${window}`]]),
          };
    case "google":
      return {
        status: 400,
        body: fill(15, [
          [/count \(\d+\)/, `count (${input})`],
          [/allowed \(\d+\)/, `allowed (${window})`],
        ]),
      };
    case "ollama":
      return {
        status: 400,
        body: fill(51, [[/by \d+ tokens/, `by ${Math.max(1, input - window)} tokens`]]),
      };
    case "zhipu":
      // The wire shape of bodies.json entry 54 (its note quotes the nested form).
      return { status: 400, body: JSON.stringify({ error: { code: "1261", message: "Prompt exceeds max length" } }) };
    default:
      return null;
  }
}
