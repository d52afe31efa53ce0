import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Usage } from "@conch/engine-client";
import { modelsResponse } from "./fake-model-lists.js";
import {
  basePath,
  type FakeModel,
  type FakeOpenAIRow,
  type FakeReply,
  inStreamError,
  serverErrorBody,
  unauthorisedBody,
  unknownModelBody,
} from "./fake-provider-dialects.js";
import type {
  FakeChatRequest,
  FakeFailure,
  FakeProvider,
  FakeProviderOptions,
  FakeRecordedRequest,
  FakeRefusal,
  FakeReplySource,
} from "./fake-provider-types.js";
import {
  chatModelOf,
  chatRequestOf,
  classifyRequest,
  corsHeadersFor,
  defaultCountTokens,
  isJson,
} from "./fake-request-reading.js";
import {
  malformedStreamPiece,
  type StreamScript,
  streamContentTypeOf,
  streamScriptFor,
  waitUnlessClosed,
} from "./fake-streams.js";
import { firstTooLongBody, loadProviderErrorBodies, type ProviderErrorEntry } from "./provider-error-bodies.js";
import { countsOutputInWindow, tooLongBodyFor } from "./too-long-bodies.js";

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

/**
 * Starts a fake provider on loopback that speaks one dialect (OpenAI-style rows, Anthropic, Gemini, Ollama):
 * model lists, streamed chat (SSE or NDJSON) with text, thinking, tool calls and usage, and refusals that
 * replay real bodies from `test-fixtures/refusals/bodies.json`. Requests over a model's window are refused
 * with the provider's real too-long body (numbers filled in). Failures (malformed JSON, truncated stream, 500,
 * connection reset, slow answers) are queued with `failNext`. Node only.
 */
export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  const dialect = options.dialect;
  const row: FakeOpenAIRow = options.row ?? "openai";
  const provider = dialect === "openai" ? row : dialect;
  const prefix = basePath(dialect, row);
  const countTokens = options.countTokens ?? defaultCountTokens;
  const requestShape = { dialect, provider, countTokens };
  const chunkSize = options.chunkSize ?? 16;
  let chunkDelayMs = options.chunkDelayMs ?? 0;
  const cors = options.cors ?? true;
  const lmStudioRestVersion = options.lmStudioRestVersion ?? "v1";
  let models = options.models ?? defaultModels;
  let reply: FakeReplySource | undefined = options.reply;
  const requests: FakeRecordedRequest[] = [];
  let queue: QueueEntry[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let closed = false;

  const wait = (ms: number, res: ServerResponse) => waitUnlessClosed(ms, res, timers);

  const corsHeaders = (req: IncomingMessage) => corsHeadersFor(cors, req);

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

  const streamContentType = () => streamContentTypeOf(dialect);

  async function writeStream(req: IncomingMessage, res: ServerResponse, script: StreamScript): Promise<void> {
    res.writeHead(200, { "content-type": streamContentType(), "cache-control": "no-cache", ...corsHeaders(req) });
    for (const [index, piece] of script.entries()) {
      if (res.destroyed || closed) return;
      res.write(piece);
      if (chunkDelayMs > 0 && index < script.length - 1) await wait(chunkDelayMs, res);
    }
    res.end();
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

  const scriptFor = (request: FakeChatRequest, replyToSend: FakeReply, usage: Usage) =>
    streamScriptFor({ dialect, row, chunkSize }, request, replyToSend, usage);
  const malformedPiece = () => malformedStreamPiece(dialect);

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
        const request = chatRequest ?? chatRequestOf(requestShape, {}, "");
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
    const answer = modelsResponse({ route, dialect, row, models, lmStudioRestVersion, url, body, requests });
    send(req, res, answer.status, answer.body);
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
    const { kind, route } = classifyRequest({ dialect, row, prefix }, method, url.pathname);
    const record = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
    const model = kind === "chat" ? chatModelOf(dialect, record, url.pathname) : undefined;
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
    const chatRequest = kind === "chat" ? chatRequestOf(requestShape, record, model ?? "") : undefined;
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
    setChunkDelayMs(ms) {
      chunkDelayMs = ms;
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
