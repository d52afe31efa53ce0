import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { type ChatMessage, textMessage } from "../messages.js";
import { readEventStream } from "../protocol/event-stream.js";
import { createProvider } from "../providers/create-provider.js";
import { createEngineHandler } from "../server/handler.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { createApiEngine } from "./api-engine.js";

// Issue #28, faults 4 and 7: a provider that keeps the connection open with keep-alive comments and sends no
// words (for a turn and for a summariser), one that sends words slowly, and a summariser that fails.
type Behaviour = "stall" | "slow-words" | "words" | "fail";
let behaviour: Behaviour = "stall";
let server: Server;
let baseURL: string;
const open = new Set<ServerResponse>();

function chunk(response: ServerResponse, text: string): void {
  const body = { id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: text } }] };
  response.write(`data: ${JSON.stringify(body)}\n\n`);
}

function finish(response: ServerResponse): void {
  const body = { id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] };
  response.write(`data: ${JSON.stringify(body)}\n\n`);
  response.write(
    `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } })}\n\ndata: [DONE]\n\n`,
  );
  response.end();
}

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    if (behaviour === "fail") {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "The summariser is down" } }));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    open.add(response);
    response.on("close", () => open.delete(response));
    if (behaviour === "words") {
      chunk(response, "A summary of what was said: the person asked about dogs.");
      finish(response);
      return;
    }
    let sent = 0;
    const timer = setInterval(() => {
      if (response.destroyed) return clearInterval(timer);
      if (behaviour === "stall") {
        response.write(": keep-alive\n\n");
        return;
      }
      chunk(response, `word${sent} `);
      sent += 1;
      if (sent === 12) {
        clearInterval(timer);
        finish(response);
      }
    }, 60);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  for (const response of open) response.destroy();
  await new Promise((resolve) => server.close(resolve));
});

function engineFor(options: { turnIdleMs?: number; foldTimeLimitMs?: number; window?: number } = {}) {
  const store = createMemoryChatStore();
  const engine = createApiEngine({
    provider: createProvider("openai", { baseURL, apiKey: "sk-test-key", local: false }),
    model: "chat",
    store,
    models: [
      {
        id: "chat",
        displayName: "Chat",
        ready: true,
        local: false,
        provider: "openai",
        context: options.window ?? 64_000,
      },
    ],
    ...(options.turnIdleMs !== undefined ? { turnIdleMs: options.turnIdleMs } : {}),
    ...(options.foldTimeLimitMs !== undefined ? { foldTimeLimitMs: options.foldTimeLimitMs } : {}),
    onError: () => undefined,
  });
  return { engine, store };
}

async function turn(engine: ReturnType<typeof engineFor>["engine"], chatId: string, seq: number, text = "Hello") {
  const events: EngineEvent[] = [];
  for await (const event of engine.sendTurn({ chatId, seq, text })) events.push(event);
  return events;
}

/** A chat of `turns` earlier turns, written to the store as a client's earlier turns would have. */
async function seedChat(store: ReturnType<typeof createMemoryChatStore>, chatId: string, turns: number, size = 40) {
  const messages: ChatMessage[] = [];
  for (let index = 0; index < turns; index++) {
    messages.push(textMessage(index * 2, "user", `Question ${index}: ${"about dogs ".repeat(size)}`));
    messages.push(textMessage(index * 2 + 1, "assistant", `Answer ${index}: ${"dogs are good ".repeat(size)}`));
  }
  await store.appendLog(chatId, messages);
  return messages.length;
}

describe("given a provider that sends keep-alive comments and no words (fault 4)", () => {
  it("should end the turn past its idle limit with a typed problem, and leave the chat free for the next", async () => {
    behaviour = "stall";
    const { engine } = engineFor({ turnIdleMs: 400 });
    const events = await turn(engine, "stalled", 0);
    const problem = events.find((event) => event.type === "turn-problem");
    expect(problem).toMatchObject({ problem: { kind: "offline", next: { type: "retry" } } });
    expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "problem" });
    behaviour = "words";
    const next = await turn(engine, "stalled", 1, "Hello again");
    expect(next.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
  });

  it("through the server, should end the stalled turn's stream with the problem, and take the next turn (no 409)", async () => {
    behaviour = "stall";
    const { engine } = engineFor({ turnIdleMs: 400 });
    const handler = createEngineHandler({ engineFor: () => engine, authorize: () => ({ userId: "p" }) });
    const post = (seq: number) =>
      handler(
        new Request("http://127.0.0.1/chats/stalled-server/turns", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ seq, text: "Hello" }),
        }),
      );
    const events: EngineEvent[] = [];
    for await (const message of readEventStream((await post(0)).body as ReadableStream<Uint8Array>)) {
      events.push(JSON.parse(message.data) as EngineEvent);
    }
    expect(events.find((event) => event.type === "turn-problem")).toMatchObject({ problem: { kind: "offline" } });
    expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "problem" });
    behaviour = "words";
    const next = await post(1);
    expect(next.status).toBe(200);
    await next.text();
  });

  it("should never cut a turn still streaming words, however long it takes in all", async () => {
    behaviour = "slow-words";
    const { engine } = engineFor({ turnIdleMs: 400 });
    const started = Date.now();
    const events = await turn(engine, "slow", 0);
    expect(Date.now() - started).toBeGreaterThan(400);
    expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    const text = events.map((event) => (event.type === "text-delta" ? event.delta : "")).join("");
    expect(text).toContain("word11");
  });
});

describe("given /compact whose summariser stalls past the fold's time limit, on a chat under its budget (faults 4 and 7)", () => {
  it("should drop nothing and say no summary was written", async () => {
    behaviour = "stall";
    const { engine, store } = engineFor({ foldTimeLimitMs: 500 });
    const count = await seedChat(store, "fold-stalls", 4);
    const heard: EngineEvent[] = [];
    engine.subscribe((event) => heard.push(event));
    const result = await engine.capabilities.context.compact("fold-stalls");
    expect(result.status).toBe("no-summary");
    expect(heard.at(-1)).toMatchObject({ type: "compaction-skipped", reason: "manual", why: "no-summary" });
    const snapshot = await engine.loadChat("fold-stalls");
    expect(snapshot.messages).toHaveLength(count);
    expect(snapshot.summary).toBeNull();
  });
});

describe("given /compact whose summariser fails (fault 7)", () => {
  it("under the budget, should drop nothing: compaction-skipped, no summary written", async () => {
    behaviour = "fail";
    const { engine, store } = engineFor();
    await seedChat(store, "under", 4);
    const heard: EngineEvent[] = [];
    engine.subscribe((event) => heard.push(event));
    const result = await engine.capabilities.context.compact("under");
    expect(result).toEqual({ status: "no-summary" });
    expect(heard.filter((event) => event.type === "compacted")).toEqual([]);
    expect(heard.at(-1)).toMatchObject({ type: "compaction-skipped", why: "no-summary" });
    expect((await engine.loadChat("under")).summary).toBeNull();
  });

  it("over the budget, should drop what an automatic fold would, mark the fold unsummarised, with one health note", async () => {
    behaviour = "fail";
    // A 16K window: a budget of about 12K tokens; 30 turns of about 750 tokens are over it.
    const { engine, store } = engineFor({ window: 16_000 });
    const count = await seedChat(store, "over", 30, 150);
    const heard: EngineEvent[] = [];
    engine.subscribe((event) => heard.push(event));
    const result = await engine.capabilities.context.compact("over");
    expect(result.status).toBe("compacted");
    if (result.status !== "compacted") return;
    expect(result.summary).toMatchObject({ text: "", model: null, reason: "manual" });
    // An automatic fold keeps half the budget's worth of turns; a manual one would keep only the newest turn.
    expect(result.summary.firstKeptSeq).toBeGreaterThan(2);
    expect(result.summary.firstKeptSeq).toBeLessThan(count - 2);
    const notes = heard.filter((event) => event.type === "health-note");
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ note: { kind: "summary-failed" } });
  });
});
