import { defaultProblemTitle, type TurnProblem } from "../problems.js";
import { recogniseTooLong, type TooLongRefusal } from "./recognise-too-long.js";

/** Which call failed: a model list treats 404 as a wrong address, a chat call as an unknown model. */
export type ProviderCallPhase = "list" | "chat";

/** A problem and, for a "too long" refusal, what it named. */
export interface MappedProblem {
  readonly problem: TurnProblem;
  readonly tooLong: TooLongRefusal | null;
}

const maximumMessageLength = 500;

/** The marker a known secret (the adapter's key) is replaced by, as the server's handler replaces its secrets. */
export const redactedKey = "[redacted]";

/**
 * `text` without the given secrets (the adapter's own key, which a provider may echo in its error). Applied to the
 * whole text before anything cuts it: a key cut in two no longer matches, and its first piece would leave.
 */
export function withoutSecrets(text: string, secrets: readonly string[] = []): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(redactedKey);
  return result;
}

function shorten(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > maximumMessageLength ? `${trimmed.slice(0, maximumMessageLength)}…` : trimmed;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function messageIn(value: unknown, depth = 0): string | undefined {
  if (depth > 4 || value === null || value === undefined) return undefined;
  if (typeof value === "string") {
    // Relayed bodies put a whole JSON error inside a string (Ollama relaying llama-server).
    const inner = value.trim().startsWith("{") ? parseJson(value) : undefined;
    return (inner !== undefined && messageIn(inner, depth + 1)) || value;
  }
  if (Array.isArray(value)) return messageIn(value[0], depth + 1);
  if (typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  for (const key of ["error", "message", "detail", "msg", "error_message"]) {
    const found = messageIn(record[key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The provider's own words in an error body: `error.message`, `message`, `error` (a string), or the text. */
export function providerMessageOf(body: string, secrets: readonly string[] = []): string | undefined {
  if (body.trim() === "") return undefined;
  const found = messageIn(parseJson(body));
  return shorten(withoutSecrets(found ?? body, secrets));
}

/** Seconds to wait, from `retry-after-ms`, `retry-after` (seconds or an HTTP date), or Gemini's `retryDelay`. */
export function retryAfterSeconds(headers: Headers | undefined, body: string, now = Date.now()): number | undefined {
  const milliseconds = Number(headers?.get("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return Math.ceil(milliseconds / 1000);
  const header = headers?.get("retry-after");
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
    const date = Date.parse(header);
    if (Number.isFinite(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  }
  const delay = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(body);
  if (delay?.[1]) return Math.ceil(Number(delay[1]));
  return undefined;
}

const authWords =
  /invalid[_ ]api[_ ]key|api key not valid|incorrect api key|invalid x-api-key|authentication|unauthori[sz]ed|permission[_ ]denied/i;
const quotaWords =
  /insufficient_quota|exceeded your current quota|\bquota\b|billing|credit balance|more credits|insufficient[_ ]credits|payment required|balance is (?:too low|insufficient)|余额不足|欠费/i;
/** Quota or credit used up (not a per-minute limit), even when it comes as 429 (OpenAI `insufficient_quota`). */
const usedUpWords =
  /insufficient_quota|check your plan and billing|credit balance|more credits|insufficient[_ ]credits|payment required|higher monthly limit|spending limit|余额不足|欠费/i;
const rateLimitWords = /rate[_ ]limit|tokens per min|requests per min|\bTPM\b|\bRPM\b|too many requests/i;
const modelWords =
  /model_not_found|model[^.]{0,80}(?:does not exist|not found|is not (?:a )?valid|not available|unavailable|decommissioned)|unknown model|no such model|invalid model|not_found_error/i;
const refusalWords =
  /content[_ ]policy|content[_ ]filter|content management policy|safety system|flagged|moderation|prohibited content|blocked by/i;

function base<K extends TurnProblem["kind"]>(kind: K, status: number | undefined, message: string | undefined) {
  return {
    kind,
    title: defaultProblemTitle(kind),
    ...(message !== undefined && { providerMessage: message }),
    ...(status !== undefined && { status }),
  };
}

/**
 * A "too long" problem as an adapter can make it. Its `next` step is a placeholder (`new-chat` with an
 * empty message) that the engine replaces: it knows the ready models and the person's message.
 */
export function tooLongRefusalProblem(
  tooLong: TooLongRefusal,
  status: number | undefined,
  message: string | undefined,
) {
  return {
    ...base("too-long", status, message),
    next: { type: "new-chat", message: "" },
    ...(tooLong.window !== undefined && { window: tooLong.window }),
  } satisfies TurnProblem;
}

/** The problem of a provider that could not be reached (or did not answer within the timeout). */
export function offlineProblem(message: string): TurnProblem {
  return { ...base("offline", undefined, message), next: { type: "retry" } };
}

/** The problem of a prompt the provider would not answer (Gemini's `promptFeedback.blockReason`). */
export function refusedProblem(message: string, status?: number): TurnProblem {
  return { ...base("refused", status, message), next: { type: "retry" } };
}

/** The problem of a body or stream that is not what the provider's API promises. */
export function malformedProblem(message: string, status?: number): TurnProblem {
  return { ...base("provider-error", status, message), next: { type: "retry" } };
}

/**
 * Maps an error response (or an error carried inside a successful one) to a TurnProblem: "too long" first
 * (in the provider's words), then 401/403 → auth, quota and billing → quota, 429 → rate-limited,
 * unknown model → model-unavailable, content refusal → refused, the rest → provider-error.
 */
export function problemFromResponse(options: {
  readonly provider: string;
  readonly status: number | undefined;
  readonly body: string;
  readonly headers?: Headers;
  readonly phase: ProviderCallPhase;
  /** Strings never to carry in the message (the adapter's key): redacted before the message is cut. */
  readonly secrets?: readonly string[];
}): MappedProblem {
  const { provider, status, body, headers, phase } = options;
  const message = providerMessageOf(body, options.secrets);
  const tooLong = recogniseTooLong(provider, status, body);
  if (tooLong) return { problem: tooLongRefusalProblem(tooLong, status, message), tooLong };

  const words = message ?? body;
  const settings = (section: "provider" | "models" | "billing") => ({ type: "open-settings", section }) as const;
  const quota = { problem: { ...base("quota", status, message), next: settings("billing") }, tooLong: null };
  if ((status === 401 || status === 403 || authWords.test(words)) && !usedUpWords.test(words)) {
    return { problem: { ...base("auth", status, message), next: settings("provider") }, tooLong: null };
  }
  // Checked before quota words: Groq's tokens-per-minute 413 links to its billing page.
  if (status === 429 || rateLimitWords.test(words)) {
    if (usedUpWords.test(words)) return quota;
    const seconds = retryAfterSeconds(headers, body);
    return {
      problem: {
        ...base("rate-limited", status, message),
        next: seconds === undefined ? { type: "retry" } : { type: "retry-after", seconds },
      },
      tooLong: null,
    };
  }
  if (status === 402 || quotaWords.test(words) || usedUpWords.test(words)) return quota;
  if ((status === 404 && phase === "chat") || modelWords.test(words)) {
    return { problem: { ...base("model-unavailable", status, message), next: settings("models") }, tooLong: null };
  }
  if (refusalWords.test(words)) {
    return { problem: { ...base("refused", status, message), next: { type: "retry" } }, tooLong: null };
  }
  return { problem: { ...base("provider-error", status, message), next: { type: "retry" } }, tooLong: null };
}
