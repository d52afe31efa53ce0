// A loopback HTTP proxy in front of a real llama-server that keeps every exchange: what the engine sent (the
// request body, parsed), what the server answered (its status, its refusal's body, and from a stream's last
// chunk its own `usage` and `timings`). The real-server suite and the bench read the server's figures here,
// whichever process (the engine in the test, `pnpm serve`, `pnpm dev`) made the request.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fetchOnClosedRetry } from "./llama-server.js";

/** A chat request's message, as the OpenAI API carries it. */
export interface SentMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_calls?: unknown;
}

/** llama-server's own figures on a stream's last chunk. */
export interface ServerTimings {
  /** Prompt tokens processed for this request (not read from the cache). */
  readonly prompt_n: number;
  /** Prompt tokens read from the slot's cache. */
  readonly cache_n: number;
  readonly predicted_n: number;
  readonly prompt_ms?: number;
  readonly predicted_ms?: number;
}

export interface RecordedExchange {
  readonly method: string;
  readonly path: string;
  /** The parsed JSON body, or null. */
  readonly body: {
    readonly model?: string;
    readonly messages?: readonly SentMessage[];
    readonly [key: string]: unknown;
  } | null;
  /** `chat` (an answer), `summary` (the summariser's request) or `other` (`/props`, `/models`, `/tokenize`, …). */
  readonly kind: "chat" | "summary" | "other";
  readonly status: number;
  /** A non-2xx answer's body, parsed when it is JSON. */
  readonly errorBody?: unknown;
  /**
   * An error the server sent inside a 200 stream (`data: {"error": …}`), parsed: llama-server ends a stream so when
   * its shared KV cells run out ("Context size has been exceeded.", no window named).
   */
  readonly streamError?: unknown;
  readonly timings?: ServerTimings;
  readonly usage?: {
    readonly prompt_tokens: number;
    readonly completion_tokens: number;
    readonly [key: string]: unknown;
  };
  readonly finishReason?: string;
  /** The answer's text (a stream's deltas joined). */
  readonly text?: string;
  readonly startedAt: number;
  readonly endedAt: number;
  /** The client closed the connection before the server's body ended (after `[DONE]`, or an abort). */
  readonly clientClosed?: boolean;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:PORT`: use it where the server's origin would go. */
  readonly origin: string;
  readonly exchanges: RecordedExchange[];
  /** Chat-completion exchanges only (answers and summaries), in order. */
  completions(): RecordedExchange[];
  /**
   * Resolves once no request is in flight. A client may read a stream's last event and move on before the proxy
   * sees the upstream body end and records the exchange; waiting here puts every exchange in the turn it served.
   */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** The summariser's system prompt starts so (`summarise/summariser.ts`). */
const summarySystemStart = "You summarise the start of a chat";

function kindOf(path: string, body: RecordedExchange["body"]): RecordedExchange["kind"] {
  if (!/\/chat\/completions$/.test(path.split("?")[0] ?? "")) return "other";
  const system = body?.messages?.find((message) => message.role === "system")?.content;
  return typeof system === "string" && system.startsWith(summarySystemStart) ? "summary" : "chat";
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Reads an SSE body's `data:` chunks for the answer's text, finish reason, usage and timings. */
function readStream(
  text: string,
): Pick<RecordedExchange, "timings" | "usage" | "finishReason" | "text" | "streamError"> {
  let answer = "";
  let timings: ServerTimings | undefined;
  let usage: RecordedExchange["usage"];
  let finishReason: string | undefined;
  let streamError: unknown;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "" || data === "[DONE]") continue;
    const chunk = parseJson(data) as {
      choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
      usage?: RecordedExchange["usage"];
      timings?: ServerTimings;
      error?: unknown;
    };
    if (typeof chunk !== "object" || chunk === null) continue;
    if (chunk.error !== undefined) streamError = chunk;
    for (const choice of chunk.choices ?? []) {
      if (typeof choice.delta?.content === "string") answer += choice.delta.content;
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    if (chunk.usage) usage = chunk.usage;
    if (chunk.timings) timings = chunk.timings;
  }
  return {
    text: answer,
    ...(timings && { timings }),
    ...(usage && { usage }),
    ...(finishReason !== undefined && { finishReason }),
    ...(streamError !== undefined && { streamError }),
  };
}

/** A whole (unstreamed) answer's usage, timings and text, as a stream's last chunk would carry them. */
function readWhole(text: string): Pick<RecordedExchange, "timings" | "usage" | "finishReason" | "text"> {
  const body = parseJson(text) as {
    choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
    usage?: RecordedExchange["usage"];
    timings?: ServerTimings;
  };
  if (typeof body !== "object" || body === null || !Array.isArray(body.choices)) return {};
  const choice = body.choices[0];
  return {
    text: choice?.message?.content ?? "",
    ...(body.timings && { timings: body.timings }),
    ...(body.usage && { usage: body.usage }),
    ...(choice?.finish_reason && { finishReason: choice.finish_reason }),
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts a proxy on a free 127.0.0.1 port that forwards everything to `target` (an origin). */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: RecordedExchange[] = [];
  let inFlight = 0;
  let waiting: (() => void)[] = [];
  const server = createServer((request, response) => {
    inFlight += 1;
    void forward(request, response)
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
        response.end(`recording proxy: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        inFlight -= 1;
        if (inFlight > 0) return;
        for (const resolve of waiting) resolve();
        waiting = [];
      });
  });

  async function forward(request: IncomingMessage, response: ServerResponse) {
    const startedAt = Date.now();
    const path = request.url ?? "/";
    const bodyBytes = await readBody(request);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || ["host", "connection", "content-length"].includes(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const method = request.method ?? "GET";
    const aborted = new AbortController();
    response.once("close", () => {
      if (!response.writableFinished) aborted.abort();
    });
    const upstream = await fetchOnClosedRetry(`${target}${path}`, {
      method,
      headers,
      ...(bodyBytes.length > 0 && { body: new Uint8Array(bodyBytes) }),
      signal: aborted.signal,
    });
    const outHeaders: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!["content-length", "content-encoding", "transfer-encoding", "connection"].includes(name))
        outHeaders[name] = value;
    });
    response.writeHead(upstream.status, outHeaders);
    const decoder = new TextDecoder();
    let text = "";
    // A client may close as soon as it has read a stream's `[DONE]`, before the server's body ends: the exchange is
    // recorded with everything the client was sent (a stream's usage comes before `[DONE]`).
    let clientClosed = false;
    try {
      for await (const chunk of upstream.body ?? []) {
        text += decoder.decode(chunk, { stream: true });
        response.write(chunk);
      }
    } catch (error) {
      if (!aborted.signal.aborted) throw error;
      clientClosed = true;
    }
    text += decoder.decode();
    const body = bodyBytes.length > 0 ? (parseJson(bodyBytes.toString("utf8")) as RecordedExchange["body"]) : null;
    const isStream = (upstream.headers.get("content-type") ?? "").includes("text/event-stream");
    exchanges.push({
      method,
      path,
      body: typeof body === "object" ? body : null,
      kind: kindOf(path, typeof body === "object" ? body : null),
      status: upstream.status,
      ...(upstream.ok ? {} : { errorBody: parseJson(text) }),
      ...(isStream ? readStream(text) : upstream.ok ? readWhole(text) : {}),
      startedAt,
      endedAt: Date.now(),
      ...(clientClosed && { clientClosed }),
    });
    response.end();
  }

  // The engine's client keeps connections open between turns; the proxy never closes an idle one first (Node's
  // default of 5 s races a request sent on it just then).
  server.keepAliveTimeout = 10 * 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    exchanges,
    completions: () => exchanges.filter((exchange) => exchange.kind !== "other"),
    settled: () => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve))),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
