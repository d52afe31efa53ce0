import type { ChatMessage, ModelInfo, Usage } from "../messages.js";
import type { RememberedWindows } from "./remembered-windows.js";

/** The fourteen providers this library has an adapter row for, by id. */
export const providerIds = [
  "openai",
  "anthropic",
  "google",
  "mistral",
  "deepseek",
  "xai",
  "groq",
  "together",
  "vllm",
  "llama.cpp",
  "lmstudio",
  "openrouter",
  "ollama",
  "zhipu",
] as const;

/** A provider id with an adapter row. Other ids are allowed where a `string` is taken (generic recogniser). */
export type ProviderId = (typeof providerIds)[number];

/** Whether a string is one of the fourteen provider ids. */
export function isProviderId(value: string): value is ProviderId {
  return (providerIds as readonly string[]).includes(value);
}

/** A tool the model may call. */
export interface ToolDefinition {
  readonly name: string;
  readonly description?: string;
  /** JSON schema of the arguments (an object schema). */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** One chat request, already framed by the engine (summary, kept turns, shortened texts). */
export interface ChatRequest {
  readonly model: string;
  readonly system?: string;
  /** Sent as given: adapters convert them, never edit thinking or signatures. */
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolDefinition[];
  /** The answer room (the provider's `max_tokens`). Default: the provider's own default (Anthropic: 4,096). */
  readonly maxOutputTokens?: number;
  /** The window to ask a local server for (Ollama `num_ctx`). Default: the adapter's own choice. */
  readonly contextWindow?: number;
  /**
   * Index in `messages` of the last message of the stable prefix (everything before the newest turns that
   * stays byte-identical until the next fold). Anthropic marks it with `cache_control`.
   */
  readonly cacheBreakpointIndex?: number;
  readonly abortSignal?: AbortSignal;
  /**
   * Milliseconds without a byte from the provider (before the answer starts, or between two pieces of it)
   * after which the call fails as `offline`. Default: the adapter's `timeoutMs` (5 minutes).
   */
  readonly timeoutMs?: number;
}

/** Why an answer ended. */
export type FinishReason = "stop" | "length" | "tool-calls" | "content-filter" | "other";

/**
 * A piece of a streamed answer. Deltas come as they arrive; a tool call comes once its arguments are
 * complete; `usage` comes at most once, just before `finish`; `finish` comes exactly once, last.
 * Failures are thrown as {@link ProviderCallError}; aborts are thrown as the AbortError.
 */
export type ProviderStreamPart =
  | { readonly type: "text-delta"; readonly delta: string }
  | {
      readonly type: "thinking-delta";
      readonly delta: string;
      /**
       * A provider signature for the thinking part being built (consecutive thinking deltas make one
       * part); keep it byte for byte. Anthropic sends it after the thinking text; Gemini sends its thought
       * signature this way too (with an empty delta), and its adapter puts it back on the message's first
       * function call (or text) when the message is sent again.
       */
      readonly signature?: string;
      /** The delta is encrypted reasoning (Anthropic `redacted_thinking` data). */
      readonly redacted?: boolean;
    }
  | {
      readonly type: "tool-call";
      readonly id: string;
      readonly name: string;
      /** The arguments as the JSON text the model wrote. */
      readonly arguments: string;
    }
  | { readonly type: "usage"; readonly usage: Usage }
  | { readonly type: "finish"; readonly reason: FinishReason };

/** Settings every adapter factory takes. All optional; the defaults reach the provider's public API. */
export interface ProviderSettings {
  /** Where the API lives. Default: the provider's public URL, or the usual local port for a local server. */
  readonly baseURL?: string;
  /** Sent as the provider expects it (`Authorization: Bearer`, `x-api-key`, `x-goog-api-key`). Default: none. */
  readonly apiKey?: string;
  /** Extra headers on every request. Default: none. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The fetch to use. Default: the global `fetch` (browser and Node). */
  readonly fetch?: typeof globalThis.fetch;
  /** Whether the server runs on this computer. Default: a local provider kind, or a loopback `baseURL`. */
  readonly local?: boolean;
  /** Default idle timeout of a call in milliseconds (see {@link ChatRequest.timeoutMs}). Default 300,000. */
  readonly timeoutMs?: number;
  /** Where windows named in refusals are remembered. Default: a fresh in-memory store. */
  readonly rememberedWindows?: RememberedWindows;
  /** Override of the cheapest model (the summariser's first choice). Default: the row's. */
  readonly cheapestModel?: string;
  /** Override of the small model (the summariser's second choice). Default: the row's. */
  readonly smallModel?: string;
}

/** Options of {@link ProviderAdapter.listModels}. */
export interface ListModelsOptions {
  readonly abortSignal?: AbortSignal;
  /** Idle timeout in milliseconds. Default: the adapter's `timeoutMs`. */
  readonly timeoutMs?: number;
}

/**
 * What the API engine and the summariser talk to: one provider (one row), reached over `fetch`.
 * Created by `createX(settings)` factories; runs in a browser and in Node.
 */
export interface ProviderAdapter {
  /** The row id (`openai`, `anthropic`, `llama.cpp`, ...). */
  readonly provider: ProviderId;
  /** Whether the server runs on this computer (then the summariser only uses the chat's own model). */
  readonly local: boolean;
  /**
   * False when `usage.inputTokens` leaves out what the provider read from its cache (Ollama's `prompt_eval_count`):
   * such a count is no count of the request, and a fold is never sized by it. Default true.
   */
  readonly inputTokensCountCache?: boolean;
  /** The base URL in use. */
  readonly baseURL: string;
  /** Windows named in refusals, per model; `listModels` already applies them (the smaller wins). */
  readonly windows: RememberedWindows;
  /** The provider's models, with the window each runs with when the provider says it. */
  listModels(options?: ListModelsOptions): Promise<ModelInfo[]>;
  /** Streams one answer. Throws {@link ProviderCallError} on failure, the AbortError on abort. */
  streamChat(request: ChatRequest): AsyncIterable<ProviderStreamPart>;
  /** The provider's cheapest chat model, when it has a well-known one. */
  readonly cheapestModel?: string;
  /** The provider's small chat model, when it has a well-known one. */
  readonly smallModel?: string;
}
