import type { Usage } from "@conch/engine-client";
import { sse } from "./fake-streams.js";

/** The four API shapes the fake server speaks. */
export type FakeDialect = "openai" | "anthropic" | "google" | "ollama";

/** The rows the `openai` dialect can play (each lists models and streams as that company does). */
export type FakeOpenAIRow =
  | "openai"
  | "deepseek"
  | "xai"
  | "groq"
  | "together"
  | "mistral"
  | "openrouter"
  | "zhipu"
  | "vllm"
  | "llama.cpp"
  | "lmstudio";

/** A model the fake server knows. */
export interface FakeModel {
  readonly id: string;
  /** The window the server enforces, and lists where its provider lists one. Default: none (never refuses). */
  readonly window?: number;
  /**
   * What the list's less-trusted field says, where the provider has two: OpenRouter `context_length` (the
   * window is `top_provider.context_length`), llama.cpp `n_ctx_train`, LM Studio `max_context_length`, Ollama's
   * trained `context_length` in `/api/show`. Default: the window.
   */
  readonly advertisedWindow?: number;
  readonly displayName?: string;
  /** Loaded in memory (LM Studio). Default true. */
  readonly loaded?: boolean;
}

/** A tool call in a scripted reply. */
export interface FakeToolCall {
  /** Default: `call_<n>` (Gemini and Ollama send none unless given). */
  readonly id?: string;
  readonly name: string;
  /** JSON text or an object. */
  readonly arguments: string | Readonly<Record<string, unknown>>;
}

/** What the fake server answers to one chat request. */
export interface FakeReply {
  readonly text?: string;
  readonly thinking?: string;
  /** A thinking signature (Anthropic `signature_delta`, Gemini `thoughtSignature`). */
  readonly thinkingSignature?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  /** Usage to report. Default: counted with the server's `countTokens`. */
  readonly usage?: Partial<Usage>;
  /**
   * Why the answer ends: `stop`, `length`, `tool-calls`, `content-filter`, or the dialect's own raw value
   * (`model_context_window_exceeded`, `SAFETY`, ...). Default `stop`, or `tool-calls` with tool calls.
   */
  readonly finishReason?: string;
}

/** The base path of each row and dialect (what `baseURL` ends with). */
export function basePath(dialect: FakeDialect, row: FakeOpenAIRow): string {
  switch (dialect) {
    case "anthropic":
      return "/v1";
    case "google":
      return "/v1beta";
    case "ollama":
      return "";
    case "openai":
      switch (row) {
        case "deepseek":
          return "";
        case "groq":
          return "/openai/v1";
        case "openrouter":
          return "/api/v1";
        case "zhipu":
          return "/api/paas/v4";
        default:
          return "/v1";
      }
    default:
      return dialect satisfies never;
  }
}

/** A 404 for an unknown model, in the dialect's words. */
export function unknownModelBody(dialect: FakeDialect, model: string): string {
  switch (dialect) {
    case "openai":
      return JSON.stringify({
        error: {
          message: `The model \`${model}\` does not exist or you do not have access to it.`,
          type: "invalid_request_error",
          param: null,
          code: "model_not_found",
        },
      });
    case "anthropic":
      return JSON.stringify({ type: "error", error: { type: "not_found_error", message: `model: ${model}` } });
    case "google":
      return JSON.stringify({
        error: {
          code: 404,
          message: `models/${model} is not found for API version v1beta, or is not supported for generateContent.`,
          status: "NOT_FOUND",
        },
      });
    case "ollama":
      return JSON.stringify({ error: `model '${model}' not found` });
    default:
      return dialect satisfies never;
  }
}

/** A 401 for a wrong key, in the dialect's words. */
export function unauthorisedBody(dialect: FakeDialect): string {
  switch (dialect) {
    case "openai":
      return JSON.stringify({
        error: {
          message: "Incorrect API key provided.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      });
    case "anthropic":
      return JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
    case "google":
      return JSON.stringify({
        error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" },
      });
    case "ollama":
      return JSON.stringify({ error: "unauthorized" });
    default:
      return dialect satisfies never;
  }
}

/** A 500 in the dialect's words. */
export function serverErrorBody(dialect: FakeDialect): string {
  switch (dialect) {
    case "openai":
      return JSON.stringify({
        error: { message: "The server had an error while processing your request.", type: "server_error", code: null },
      });
    case "anthropic":
      return JSON.stringify({ type: "error", error: { type: "api_error", message: "Internal server error" } });
    case "google":
      return JSON.stringify({ error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } });
    case "ollama":
      return JSON.stringify({ error: "llama runner process has terminated: exit status 2" });
    default:
      return dialect satisfies never;
  }
}

/** An error sent inside an OK stream (an SSE `error` event, or an NDJSON `error` line) carrying `body`. */
export function inStreamError(dialect: FakeDialect, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  switch (dialect) {
    case "openai":
      return sse(
        typeof parsed === "object" && parsed !== null && "error" in parsed
          ? parsed
          : { error: { message: body, code: 400 } },
      );
    case "anthropic":
      return sse(
        typeof parsed === "object" && parsed !== null && (parsed as { type?: unknown }).type === "error"
          ? parsed
          : { type: "error", error: { type: "invalid_request_error", message: body } },
        "error",
      );
    case "google":
      return sse(
        typeof parsed === "object" && parsed !== null && "error" in parsed
          ? parsed
          : { error: { code: 400, message: body } },
      );
    case "ollama": {
      const message =
        typeof parsed === "object" && parsed !== null && typeof (parsed as { error?: unknown }).error === "string"
          ? (parsed as { error: string }).error
          : body;
      return `${JSON.stringify({ error: message })}\n`;
    }
    default:
      return dialect satisfies never;
  }
}
