import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Usage } from "@conch/engine-client";
import {
  anthropicModelList,
  anthropicStream,
  basePath,
  type FakeDialect,
  type FakeModel,
  type FakeOpenAIRow,
  type FakeReply,
  googleModelList,
  googleStream,
  inStreamError,
  llamaCppProps,
  lmStudioV0List,
  lmStudioV1List,
  ollamaShow,
  ollamaStream,
  ollamaTags,
  openAIModelList,
  openAIStream,
  type StreamScript,
  serverErrorBody,
  unauthorisedBody,
  unknownModelBody,
} from "./fake-provider-dialects.js";
import { firstTooLongBody, loadProviderErrorBodies, type ProviderErrorEntry } from "./provider-error-bodies.js";
import { countsOutputInWindow, tooLongBodyFor } from "./too-long-bodies.js";

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
  /** Replaces the reply. */
  setReply(reply: FakeReplySource): void;
  /** Replaces the models. */
  setModels(models: readonly FakeModel[]): void;
  /** Forgets recorded requests and queued refusals and failures. */
  reset(): void;
  /** Stops the server, ends open streams and releases the port. */
  close(): Promise<void>;
}

type QueuedAction =
  | { readonly type: "failure"; readonly failure: FakeFailure }
  | {
      readonly type: "refusal";
      readonly status: number;
      readonly body: string;
      readonly via: "status" | "stream-error";
    };

interface QueueEntry {
  remaining: number;
  readonly on: "chat" | "models" | "any";
  readonly action: QueuedAction;
  /** Only chat requests for these models take the entry. */
  readonly models?: readonly string[];
}

const defaultModels: readonly FakeModel[] = [{ id: "fake-model", window: 32_768 }];
const pictureTokens = 1600;
const ignoredKeys = new Set([
  "model",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
  "options",
  "generationConfig",
  "truncate",
  "transforms",
  "role",
  "type",
  "id",
  "tool_call_id",
  "tool_use_id",
  "media_type",
  "mimeType",
  "signature",
  "thoughtSignature",
  "cache_control",
]);

function defaultCountTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The prompt's text and picture count, from any dialect's request body. */
function readPrompt(body: unknown): { text: string; pictures: number } {
  const texts: string[] = [];
  let pictures = 0;
  const walk = (value: unknown, key: string | undefined): void => {
    if (key !== undefined && ignoredKeys.has(key)) return;
    if (typeof value === "string") {
      texts.push(value);
      return;
    }
    if (Array.isArray(value)) {
      if (key === "images") {
        pictures += value.length;
        return;
      }
      for (const item of value) walk(item, undefined);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    const record = value as Record<string, unknown>;
    if (
      key === "image_url" ||
      key === "inlineData" ||
      key === "fileData" ||
      (key === "source" && ("data" in record || "url" in record))
    ) {
      pictures += 1;
      return;
    }
    for (const [inner, innerValue] of Object.entries(record)) walk(innerValue, inner);
  };
  walk(body, undefined);
  return { text: texts.join("\n"), pictures };
}

function lastUserTextOf(body: Record<string, unknown>): string {
  const list = (
    Array.isArray(body.messages) ? body.messages : Array.isArray(body.contents) ? body.contents : []
  ) as unknown[];
  for (let index = list.length - 1; index >= 0; index -= 1) {
    const message = list[index] as Record<string, unknown> | undefined;
    if (message?.role !== "user") continue;
    const { text } = readPrompt(message.content ?? message.parts);
    if (text) return text;
  }
  return "";
}

function numberField(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function resolveRefusal(refusal: FakeRefusal): { status: number; body: string } {
  let entry: ProviderErrorEntry | { status: number | null; body: string };
  if (typeof refusal === "number") {
    const found = loadProviderErrorBodies()[refusal];
    if (!found) throw new Error(`bodies.json has no entry ${refusal}`);
    entry = found;
  } else if (typeof refusal === "string") entry = firstTooLongBody(refusal);
  else entry = refusal;
  return { status: entry.status ?? 400, body: entry.body };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts a fake provider on loopback that speaks one dialect (OpenAI-style rows, Anthropic, Gemini, Ollama):
 * model lists, streamed chat (SSE or NDJSON) with text, thinking, tool calls and usage, and refusals that
 * replay real bodies from `shared/data/provider-errors/bodies.json`. Requests over a model's window are refused
 * with the provider's real too-long body (numbers filled in). Failures (malformed JSON, truncated stream, 500,
 * connection reset, slow answers) are queued with `failNext`. Node only.
 */
export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  const dialect = options.dialect;
  const row: FakeOpenAIRow = options.row ?? "openai";
  const provider = dialect === "openai" ? row : dialect;
  const prefix = basePath(dialect, row);
  const countTokens = options.countTokens ?? defaultCountTokens;
  const chunkSize = options.chunkSize ?? 16;
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const cors = options.cors ?? true;
  const lmStudioRestVersion = options.lmStudioRestVersion ?? "v1";
  let models = options.models ?? defaultModels;
  let reply: FakeReplySource | undefined = options.reply;
  const requests: FakeRecordedRequest[] = [];
  let queue: QueueEntry[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let closed = false;

  const wait = (ms: number, res: ServerResponse) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) {
        setImmediate(resolve);
        return;
      }
      const onClose = () => {
        clearTimeout(timer);
        timers.delete(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        timers.delete(timer);
        // One listener per wait, removed when the wait ends: a long stream must not pile them up.
        res.off("close", onClose);
        resolve();
      }, ms);
      timers.add(timer);
      res.once("close", onClose);
    });

  function corsHeaders(req: IncomingMessage): Record<string, string> {
    if (!cors) return {};
    return {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET, POST, OPTIONS",
      // `*` does not cover Authorization, so the asked-for headers are echoed.
      "access-control-allow-headers": String(req.headers["access-control-request-headers"] ?? "*"),
      "access-control-expose-headers": "retry-after, retry-after-ms, x-request-id",
      "access-control-max-age": "600",
      ...(req.headers["access-control-request-private-network"] && { "access-control-allow-private-network": "true" }),
    };
  }

  function send(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: string | object,
    headers: Readonly<Record<string, string>> = {},
  ): void {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    const json = typeof body !== "string" || isJson(body);
    res.writeHead(status, {
      "content-type": json ? "application/json" : "text/plain; charset=utf-8",
      ...corsHeaders(req),
      ...headers,
    });
    res.end(text);
  }

  function streamContentType(): string {
    return dialect === "ollama" ? "application/x-ndjson" : "text/event-stream; charset=utf-8";
  }

  async function writeStream(req: IncomingMessage, res: ServerResponse, script: StreamScript): Promise<void> {
    res.writeHead(200, { "content-type": streamContentType(), "cache-control": "no-cache", ...corsHeaders(req) });
    for (const [index, piece] of script.entries()) {
      if (res.destroyed || closed) return;
      res.write(piece);
      if (chunkDelayMs > 0 && index < script.length - 1) await wait(chunkDelayMs, res);
    }
    res.end();
  }

  function classify(method: string, path: string): { kind: FakeRecordedRequest["kind"]; route: string } {
    const local = path.startsWith(prefix) ? path.slice(prefix.length) || "/" : path;
    switch (dialect) {
      case "openai":
        if (method === "GET" && local === "/models") return { kind: "models", route: "models" };
        if (method === "POST" && local === "/chat/completions") return { kind: "chat", route: "chat" };
        if (row === "llama.cpp" && method === "GET" && path === "/props") return { kind: "models", route: "props" };
        if (row === "lmstudio" && method === "GET" && path === "/api/v1/models")
          return { kind: "models", route: "lm-v1" };
        if (row === "lmstudio" && method === "GET" && path === "/api/v0/models")
          return { kind: "models", route: "lm-v0" };
        return { kind: "other", route: "unknown" };
      case "anthropic":
        if (method === "GET" && local === "/models") return { kind: "models", route: "models" };
        if (method === "POST" && local === "/messages") return { kind: "chat", route: "chat" };
        return { kind: "other", route: "unknown" };
      case "google":
        if (method === "GET" && local === "/models") return { kind: "models", route: "models" };
        if (method === "POST" && /^\/models\/[^/]+:streamGenerateContent$/.test(local))
          return { kind: "chat", route: "chat" };
        return { kind: "other", route: "unknown" };
      case "ollama":
        if (method === "GET" && path === "/api/tags") return { kind: "models", route: "models" };
        if (method === "POST" && path === "/api/show") return { kind: "models", route: "show" };
        if (method === "GET" && path === "/api/ps") return { kind: "models", route: "ps" };
        if (method === "POST" && path === "/api/chat") return { kind: "chat", route: "chat" };
        return { kind: "other", route: "unknown" };
      default:
        return dialect satisfies never;
    }
  }

  function takeQueued(kind: FakeRecordedRequest["kind"], model: string | undefined): QueuedAction | undefined {
    const entry = queue.find(
      (item) =>
        (item.on === "any" || item.on === kind) &&
        (item.models === undefined || (model !== undefined && item.models.includes(model))),
    );
    if (!entry) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) queue = queue.filter((item) => item !== entry);
    return entry.action;
  }

  function authorised(req: IncomingMessage, url: URL): boolean {
    if (options.apiKey === undefined) return true;
    const key = options.apiKey;
    const header = (name: string) => String(req.headers[name] ?? "");
    return (
      header("authorization") === `Bearer ${key}` ||
      header("x-api-key") === key ||
      header("x-goog-api-key") === key ||
      url.searchParams.get("key") === key
    );
  }

  function chatModelOf(body: Record<string, unknown>, path: string): string {
    if (dialect === "google") {
      const match = /\/models\/([^/:]+):/.exec(path);
      return decodeURIComponent(match?.[1] ?? "");
    }
    return typeof body.model === "string" ? body.model : "";
  }

  function chatRequestOf(body: Record<string, unknown>, model: string): FakeChatRequest {
    const prompt = readPrompt(body);
    const generation = body.generationConfig as Record<string, unknown> | undefined;
    const ollamaOptions = body.options as Record<string, unknown> | undefined;
    const maxOutputTokens =
      numberField(body.max_tokens) ??
      numberField(body.max_completion_tokens) ??
      numberField(generation?.maxOutputTokens) ??
      numberField(ollamaOptions?.num_predict);
    const contextWindow = numberField(ollamaOptions?.num_ctx);
    return {
      dialect,
      provider,
      model,
      body,
      promptText: prompt.text,
      lastUserText: lastUserTextOf(body),
      pictures: prompt.pictures,
      inputTokens: countTokens(prompt.text) + prompt.pictures * pictureTokens,
      ...(maxOutputTokens !== undefined && { maxOutputTokens }),
      ...(contextWindow !== undefined && { contextWindow }),
    };
  }

  function overWindowRefusal(request: FakeChatRequest): { status: number; body: string } | undefined {
    if (options.enforceWindows === false) return undefined;
    const model = models.find((item) => item.id === request.model);
    const window = dialect === "ollama" ? (request.contextWindow ?? model?.window) : model?.window;
    if (window === undefined) return undefined;
    const output = countsOutputInWindow(provider) ? (request.maxOutputTokens ?? 0) : 0;
    if (request.inputTokens <= window && request.inputTokens + output <= window) return undefined;
    return (
      tooLongBodyFor(provider, { window, inputTokens: request.inputTokens, outputTokens: output }) ??
      resolveRefusal(provider)
    );
  }

  async function replyTo(request: FakeChatRequest): Promise<{ reply: FakeReply; usage: Usage }> {
    const source = reply;
    const scripted =
      source === undefined
        ? { text: `Hello from the fake ${provider} server. You said: ${request.lastUserText.slice(0, 200)}` }
        : typeof source === "function"
          ? await source(request)
          : source;
    const outputText = [
      scripted.thinking ?? "",
      scripted.text ?? "",
      ...(scripted.toolCalls ?? []).map((call) =>
        typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
      ),
    ].join("");
    return {
      reply: scripted,
      usage: {
        inputTokens: scripted.usage?.inputTokens ?? request.inputTokens,
        outputTokens: scripted.usage?.outputTokens ?? countTokens(outputText),
        cachedInputTokens: scripted.usage?.cachedInputTokens ?? 0,
      },
    };
  }

  function scriptFor(request: FakeChatRequest, replyToSend: FakeReply, usage: Usage): StreamScript {
    switch (dialect) {
      case "openai": {
        const streamOptions = request.body.stream_options as { include_usage?: unknown } | undefined;
        return openAIStream(row, request.model, replyToSend, usage, {
          chunkSize,
          includeUsage: streamOptions?.include_usage === true,
        });
      }
      case "anthropic":
        return anthropicStream(request.model, replyToSend, usage, chunkSize);
      case "google":
        return googleStream(request.model, replyToSend, usage, chunkSize);
      case "ollama":
        return ollamaStream(request.model, replyToSend, usage, chunkSize);
      default:
        return dialect satisfies never;
    }
  }

  function malformedPiece(): string {
    return dialect === "ollama" ? '{"message":{"content":"Hel\n' : 'data: {"choices":[{"delta":{"content":"Hel\n\n';
  }

  async function playFailure(
    req: IncomingMessage,
    res: ServerResponse,
    failure: FakeFailure,
    kind: FakeRecordedRequest["kind"],
    chatRequest: FakeChatRequest | undefined,
    normal: () => Promise<void>,
  ): Promise<void> {
    if (typeof failure === "object") {
      if (failure.type === "slow") {
        await wait(failure.delayMs, res);
        if (!res.destroyed && !closed) await normal();
        return;
      }
      send(req, res, failure.status, failure.body, failure.headers);
      return;
    }
    switch (failure) {
      case "http-500":
        send(req, res, 500, serverErrorBody(dialect));
        return;
      case "connection-reset":
        req.socket.resetAndDestroy();
        return;
      case "malformed-json":
        if (kind === "chat") {
          res.writeHead(200, { "content-type": streamContentType(), ...corsHeaders(req) });
          res.end(malformedPiece());
        } else {
          res.writeHead(200, { "content-type": "application/json", ...corsHeaders(req) });
          res.end('{"data":[{"id":');
        }
        return;
      case "truncated-stream":
      case "reset-mid-stream": {
        const request = chatRequest ?? chatRequestOf({}, "");
        const { reply: replyToSend, usage } = await replyTo(request);
        const script = scriptFor(request, { ...replyToSend, text: replyToSend.text || "A partial answer." }, usage);
        const half = script.slice(0, Math.max(2, Math.floor(script.length / 2)));
        res.writeHead(200, { "content-type": streamContentType(), ...corsHeaders(req) });
        for (const piece of half) res.write(piece);
        if (failure === "truncated-stream") res.end();
        else res.write("", () => req.socket.resetAndDestroy());
        return;
      }
      default:
        failure satisfies never;
    }
  }

  async function handleChat(req: IncomingMessage, res: ServerResponse, request: FakeChatRequest): Promise<void> {
    if (models.length > 0 && !models.some((model) => model.id === request.model)) {
      send(req, res, 404, unknownModelBody(dialect, request.model));
      return;
    }
    const refusal = overWindowRefusal(request);
    if (refusal) {
      send(req, res, refusal.status, refusal.body);
      return;
    }
    const { reply: replyToSend, usage } = await replyTo(request);
    await writeStream(req, res, scriptFor(request, replyToSend, usage));
  }

  function handleModels(req: IncomingMessage, res: ServerResponse, route: string, url: URL, body: unknown): void {
    switch (route) {
      case "models":
        switch (dialect) {
          case "openai":
            send(req, res, 200, openAIModelList(row, models) as object);
            return;
          case "anthropic":
            send(req, res, 200, anthropicModelList(models) as object);
            return;
          case "google":
            send(req, res, 200, googleModelList(models) as object);
            return;
          case "ollama":
            send(req, res, 200, ollamaTags(models) as object);
            return;
          default:
            dialect satisfies never;
            return;
        }
      case "props":
        send(req, res, 200, llamaCppProps(models, url.searchParams.get("model")) as object);
        return;
      case "lm-v1":
        if (lmStudioRestVersion === "v1") send(req, res, 200, lmStudioV1List(models) as object);
        else send(req, res, 404, { error: "Unexpected endpoint or method. (GET /api/v1/models)" });
        return;
      case "lm-v0":
        if (lmStudioRestVersion !== "none") send(req, res, 200, lmStudioV0List(models) as object);
        else send(req, res, 404, { error: "Unexpected endpoint or method. (GET /api/v0/models)" });
        return;
      case "show": {
        const name = typeof body === "object" && body !== null ? (body as { model?: unknown; name?: unknown }) : {};
        const id = String(name.model ?? name.name ?? "");
        const model = models.find((item) => item.id === id);
        if (model) send(req, res, 200, ollamaShow(model) as object);
        else send(req, res, 404, unknownModelBody("ollama", id));
        return;
      }
      case "ps": {
        const lastWindows = new Map<string, number>();
        for (const recorded of requests) {
          const numCtx = numberField(
            (recorded.body as { options?: { num_ctx?: unknown } } | undefined)?.options?.num_ctx,
          );
          if (recorded.kind === "chat" && recorded.model && numCtx !== undefined)
            lastWindows.set(recorded.model, numCtx);
        }
        send(req, res, 200, {
          models: [...lastWindows].map(([name, contextLength]) => ({
            name,
            model: name,
            context_length: contextLength,
          })),
        });
        return;
      }
      default:
        send(req, res, 404, { error: `Unknown route ${route}` });
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = req.method ?? "GET";
    if (method === "OPTIONS") {
      res.writeHead(204, corsHeaders(req));
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: unknown;
    if (raw !== "") {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const { kind, route } = classify(method, url.pathname);
    const record = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
    const model = kind === "chat" ? chatModelOf(record, url.pathname) : undefined;
    requests.push({
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(Object.entries(req.headers).map(([key, value]) => [key, String(value)])),
      body,
      kind,
      ...(model !== undefined && { model }),
    });
    if (!authorised(req, url)) {
      send(req, res, 401, unauthorisedBody(dialect));
      return;
    }
    if (kind === "other") {
      send(req, res, 404, { error: { message: `No route for ${method} ${url.pathname}`, type: "not_found" } });
      return;
    }
    const chatRequest = kind === "chat" ? chatRequestOf(record, model ?? "") : undefined;
    const normal = async () => {
      if (chatRequest) await handleChat(req, res, chatRequest);
      else handleModels(req, res, route, url, body);
    };
    const action = takeQueued(kind, model);
    if (!action) {
      await normal();
      return;
    }
    switch (action.type) {
      case "failure":
        await playFailure(req, res, action.failure, kind, chatRequest, normal);
        return;
      case "refusal":
        if (action.via === "stream-error" && kind === "chat") {
          res.writeHead(200, { "content-type": streamContentType(), ...corsHeaders(req) });
          res.end(inStreamError(dialect, action.body));
        } else send(req, res, action.status, action.body);
        return;
      default:
        action satisfies never;
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(req, res, 500, { error: { message: String(error), type: "fake_server_bug" } });
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;

  return {
    baseURL: `${origin}${prefix}`,
    origin,
    dialect,
    provider,
    requests,
    chatRequests: () => requests.filter((request) => request.kind === "chat"),
    refuseNext(count = 1, refusal = provider, refuseOptions = {}) {
      const { status, body } = resolveRefusal(refusal);
      queue.push({
        remaining: count,
        on: "chat",
        action: { type: "refusal", status, body, via: refuseOptions.via ?? "status" },
        ...(refuseOptions.models ? { models: refuseOptions.models } : {}),
      });
    },
    failNext(count, failure, failOptions = {}) {
      queue.push({ remaining: count, on: failOptions.on ?? "chat", action: { type: "failure", failure } });
    },
    setReply(next) {
      reply = next;
    },
    setModels(next) {
      models = next;
    },
    reset() {
      requests.length = 0;
      queue = [];
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await stopped;
    },
  };
}
