import type { FakeDialect, FakeModel, FakeOpenAIRow, FakeReply } from "./fake-provider-dialects.js";
import type { ProviderErrorEntry } from "./provider-error-bodies.js";

// What startFakeProvider takes and gives: its options, the running server, the requests it records.

/** A chat request as the fake server understood it; given to `reply` functions. */
export interface FakeChatRequest {
  readonly dialect: FakeDialect;
  /** The provider id the server plays (`openai`, `groq`, `anthropic`, `ollama`, ...). */
  readonly provider: string;
  readonly model: string;
  /** The parsed request body. */
  readonly body: Readonly<Record<string, unknown>>;
  /** All the prompt's text (system, messages, tool results, tool schemas), joined. */
  readonly promptText: string;
  /** The text of the last user message. */
  readonly lastUserText: string;
  /** Pictures whose bytes or links were sent. */
  readonly pictures: number;
  /** Prompt tokens as the server counts them (`countTokens`, plus 1,600 a picture). */
  readonly inputTokens: number;
  /** `max_tokens` (or its cousins), when asked. */
  readonly maxOutputTokens?: number;
  /** Ollama's `options.num_ctx`, when asked. */
  readonly contextWindow?: number;
}

/** A scripted reply, or a function of the request (sync or async). */
export type FakeReplySource = FakeReply | ((request: FakeChatRequest) => FakeReply | Promise<FakeReply>);

/** A request the fake server received. */
export interface FakeRecordedRequest {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body, or the raw text when it is not JSON, or undefined when empty. */
  readonly body: unknown;
  readonly kind: "models" | "chat" | "other";
  /** The model of a chat request. */
  readonly model?: string;
}

/**
 * A failure to play:
 * - `malformed-json`: an OK response whose JSON (or stream piece) does not parse;
 * - `truncated-stream`: the first half of the stream, then the end, with no finish;
 * - `http-500`: a 500 in the dialect's words;
 * - `connection-reset`: the connection is reset before any answer;
 * - `reset-mid-stream`: a little of the stream, then the connection is reset;
 * - `slow`: wait `delayMs` before answering (normally); a client timeout should fire first;
 * - `status`: any status, body and headers (401, 429 with `retry-after`, 404, ...).
 */
export type FakeFailure =
  | "malformed-json"
  | "truncated-stream"
  | "http-500"
  | "connection-reset"
  | "reset-mid-stream"
  | { readonly type: "slow"; readonly delayMs: number }
  | {
      readonly type: "status";
      readonly status: number;
      readonly body: string | Readonly<Record<string, unknown>>;
      readonly headers?: Readonly<Record<string, string>>;
    };

/**
 * A refusal to replay: a bodies.json entry by index or as loaded, a provider id (its first real too-long
 * body), or any status and body.
 */
export type FakeRefusal = number | string | ProviderErrorEntry | { readonly status: number; readonly body: string };

/** Options of {@link startFakeProvider}. */
export interface FakeProviderOptions {
  readonly dialect: FakeDialect;
  /** The company the `openai` dialect plays (model-list shape, paths, usage). Default `openai`. */
  readonly row?: FakeOpenAIRow;
  /** The models it lists and accepts. Default: one model, `fake-model`, with a 32,768-token window. */
  readonly models?: readonly FakeModel[];
  /** The reply to chat requests. Default: a short answer quoting the last user message. */
  readonly reply?: FakeReplySource;
  /** Counts tokens of a text (for usage and window checks). Default: a quarter of the characters, rounded up. */
  readonly countTokens?: (text: string) => number;
  /** Refuse requests over a model's window with the provider's real too-long body. Default true. */
  readonly enforceWindows?: boolean;
  /** When set, requests without this key get a 401 in the dialect's words. */
  readonly apiKey?: string;
  /** Default 0 (a free port). */
  readonly port?: number;
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Characters per streamed piece. Default 16. */
  readonly chunkSize?: number;
  /** Milliseconds between streamed pieces (a visible stream for demos). Default 0. */
  readonly chunkDelayMs?: number;
  /** Answer CORS preflights and add CORS headers, so a browser page can call it. Default true. */
  readonly cors?: boolean;
  /** Which LM Studio REST list to offer beside `/v1/models`. Default `v1` (0.4+), `v0` for 0.3.x. */
  readonly lmStudioRestVersion?: "v1" | "v0" | "none";
}

/** A running fake provider. */
export interface FakeProvider {
  /** What to give an adapter as `baseURL` (origin plus the provider's base path). */
  readonly baseURL: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly dialect: FakeDialect;
  /** The provider id it plays. */
  readonly provider: string;
  /** Every request received, in order (a live array). */
  readonly requests: readonly FakeRecordedRequest[];
  /** The chat requests received. */
  chatRequests(): FakeRecordedRequest[];
  /**
   * Refuses the next `count` chat requests (default 1) with a real body: by bodies.json index, by entry, by
   * provider id (default: the provider it plays), or any status and body. `via: "stream-error"` sends it
   * inside an OK stream (an SSE `error` event, an NDJSON `error` line) instead of as the response status.
   */
  refuseNext(
    count?: number,
    refusal?: FakeRefusal,
    options?: {
      readonly via?: "status" | "stream-error";
      /** Only requests for these models are refused (say, the chat's, not the summariser's). Default: any. */
      readonly models?: readonly string[];
    },
  ): void;
  /** Plays a failure on the next `count` requests of a kind (default: chat requests). */
  failNext(count: number, failure: FakeFailure, options?: { readonly on?: "chat" | "models" | "any" }): void;
  /** Changes the milliseconds between streamed pieces from the next piece on (an answer slow enough to reload into). */
  setChunkDelayMs(ms: number): void;
  /** Replaces the reply. */
  setReply(reply: FakeReplySource): void;
  /** Replaces the models. */
  setModels(models: readonly FakeModel[]): void;
  /** Forgets recorded requests and queued refusals and failures. */
  reset(): void;
  /** Stops the server, ends open streams and releases the port. */
  close(): Promise<void>;
}
