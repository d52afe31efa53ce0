// A loopback HTTP proxy in front of a real llama-server that keeps every exchange: what the engine sent (the
// request body, parsed), what the server answered (its status, its refusal's body, and from a stream's last
// chunk its own `usage` and `timings`). The real-server suite and the bench read the server's figures here,
// whichever process (the engine in the test, `pnpm serve`, `pnpm dev`) made the request.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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
}

export interface RecordingProxy {
  /** `http://127.0.0.1:PORT`: use it where the server's origin would go. */
  readonly origin: string;
  readonly exchanges: RecordedExchange[];
  /** Chat-completion exchanges only (answers and summaries), in order. */
  completions(): RecordedExchange[];
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
function readStream(text: string): Pick<RecordedExchange, "timings" | "usage" | "finishReason" | "text"> {
  let answer = "";
  let timings: ServerTimings | undefined;
  let usage: RecordedExchange["usage"];
  let finishReason: string | undefined;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "" || data === "[DONE]") continue;
    const chunk = parseJson(data) as {
      choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
      usage?: RecordedExchange["usage"];
      timings?: ServerTimings;
    };
    if (typeof chunk !== "object" || chunk === null) continue;
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
  const server = createServer((request, response) => {
    void forward(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
      response.end(`recording proxy: ${error instanceof Error ? error.message : String(error)}`);
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
    const upstream = await fetch(`${target}${path}`, {
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
    // From a stream's `[DONE]` on, bytes are held until the exchange is recorded: a client stops reading at
    // `[DONE]` and may end its turn before the server closes the stream, and the exchange must not be recorded
    // after that (a turn's exchanges are the ones recorded while it ran; one recorded late went to the next turn).
    const held: Uint8Array[] = [];
    if (upstream.body) {
      for await (const chunk of upstream.body) {
        text += decoder.decode(chunk, { stream: true });
        if (held.length > 0 || text.includes("data: [DONE]")) held.push(chunk);
        else response.write(chunk);
      }
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
      ...(isStream ? readStream(text) : {}),
      startedAt,
      endedAt: Date.now(),
    });
    // Recorded before the last bytes reach the client, so a turn that ends on them finds its exchange here.
    for (const chunk of held) response.write(chunk);
    response.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    exchanges,
    completions: () => exchanges.filter((exchange) => exchange.kind !== "other"),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
