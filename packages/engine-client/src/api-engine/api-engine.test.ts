import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createReplayScript,
  type FakeDialect,
  type FakeModel,
  type FakeOpenAIRow,
  type FakeProvider,
  loadConversationFile,
  loadProviderErrorBodies,
  recordedTurns,
  replayTurns,
  startFakeProvider,
} from "@conch/fake-provider";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import { unframeSummary } from "../context/frame.js";
import { ChatStoreWriteError, LearnerFailedError } from "../errors.js";
import type { EngineEvent } from "../events.js";
import { createMemoryLearner } from "../learning/memory-learner.js";
import type { ModelInfo } from "../messages.js";
import { chatLogFrom } from "../mock/long-chat.js";
import { createProvider } from "../providers/create-provider.js";
import type { ProviderId } from "../providers/provider-adapter.js";
import { createFileChatStore } from "../transcript/file-store.node.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { type ApiEngineOptions, createApiEngine } from "./api-engine.js";

const servers: FakeProvider[] = [];
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

interface Setup {
  readonly dialect?: FakeDialect;
  readonly row?: FakeOpenAIRow;
  readonly providerId?: ProviderId;
  readonly models: readonly FakeModel[];
  readonly model: string;
  readonly engine?: Partial<ApiEngineOptions>;
  readonly chunkDelayMs?: number;
  readonly cheapWindow?: number;
}

async function setup(options: Setup) {
  const script = createReplayScript(["cheap"]);
  const server = await startFakeProvider({
    dialect: options.dialect ?? "openai",
    row: options.row ?? "openrouter",
    models: [
      ...options.models,
      { id: "cheap", window: options.cheapWindow ?? 128_000, displayName: "Cheap Summariser" },
    ],
    countTokens: (text) => countTokens(text),
    reply: script.reply,
    ...(options.chunkDelayMs ? { chunkDelayMs: options.chunkDelayMs } : {}),
  });
  servers.push(server);
  const provider = createProvider(options.providerId ?? options.row ?? "openrouter", {
    baseURL: server.baseURL,
    // The fake server is on loopback; here it plays a model API, not a server on this computer.
    local: false,
    cheapestModel: "cheap",
  });
  const store = createMemoryChatStore();
  const engine = createApiEngine({
    provider,
    model: options.model,
    store,
    systemPrompt: "You are a helpful assistant in a long chat.",
    ...options.engine,
  });
  return { server, provider, store, engine, script };
}

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function chatRequestBodies(server: FakeProvider) {
  return server
    .chatRequests()
    .filter((request) => request.model !== "cheap")
    .map((request) => request.body as { messages: Array<{ role: string; content: unknown }> });
}

const history = chatLogFrom(
  Array.from(
    { length: 30 },
    (_, index) =>
      [`Question ${index}: ${"tell me more ".repeat(60)}`, `Answer ${index}: ${"here it is ".repeat(80)}`] as const,
  ),
);

describe("createApiEngine", () => {
  it("should declare the context capability and answer a turn with the events a UI needs, in order", async () => {
    const { engine, script, store } = await setup({ models: [{ id: "chat-32k", window: 32_000 }], model: "chat-32k" });
    expect(engine.capabilities.context).toBeDefined();
    script.queue.push({ text: "Hello there, how can I help?" });
    const events = await collect(engine.sendTurn({ chatId: "c1", seq: 0, text: "Hi" }));
    const types = events.map((event) => event.type).filter((type) => type !== "text-delta");
    expect(types).toEqual(["turn-start", "message-start", "usage", "message-end", "turn-end"]);
    const text = events.flatMap((event) => (event.type === "text-delta" ? [event.delta] : [])).join("");
    expect(text).toBe("Hello there, how can I help?");
    const chat = await engine.loadChat("c1");
    expect(chat.messages.map((message) => [message.seq, message.role])).toEqual([
      [0, "user"],
      [1, "assistant"],
    ]);
    expect(chat.model.context).toBe(32_000);
    expect(chat.contextUsage?.window).toBe(32_000);
    expect(chat.usage.inputTokens).toBeGreaterThan(0);
    const file = await store.readTranscript("c1");
    expect(file?.version).toBe(1);
    expect(file?.seqs).toEqual([0, 1]);
    expect(file?.factor).toBeGreaterThanOrEqual(1);
  });

  describe("given a long real transcript played turn by turn", () => {
    it.each([8_000, 32_000, 128_000])(
      "at a %i-token window, should never send a request over it, fold with framed summaries and keep the prefix between folds",
      async (window) => {
        // 158 messages, 149,058 characters of a real agent session (test-fixtures/chats).
        const conversation = loadConversationFile("minsky-specstory.jsonl").find(
          (candidate) => candidate.id === "minsky/2025-04-26_20-30-setting-up-minsky-cli-with-bun",
        );
        expect(conversation).toBeDefined();
        const turns = recordedTurns(conversation?.messages ?? []).slice(0, 40);
        const folder = await mkdtemp(join(tmpdir(), "api-engine-"));
        folders.push(folder);
        const store = createFileChatStore({ root: folder });
        const { engine, server, script, provider } = await setup({
          models: [{ id: "chat", window }],
          model: "chat",
          engine: { store },
        });
        const fileSizes: number[] = [];
        // Every event, the turns' and a fold's ahead of the need between them (to listeners only), in order.
        const events: EngineEvent[] = [];
        engine.subscribe((event) => events.push(event));
        const stats = await replayTurns(engine, "long", turns, script, {
          onTurn: async () => {
            fileSizes.push((await readFile(join(folder, "api-sessions", "long.json"), "utf8")).length);
          },
        });
        expect(stats.problems).toBe(0);
        // The server counts every request with o200k and refuses those over the window: none was refused.
        expect(stats.heals).toBe(0);
        expect(provider.windows.get("openrouter", "chat")).toBeUndefined();
        const bodies = chatRequestBodies(server);
        expect(bodies.length).toBe(stats.requests);
        const over = server
          .chatRequests()
          .filter((request) => request.model === "chat")
          .filter((request) => countTokens(JSON.stringify(request.body)) > window * 1.15);
        expect(over).toEqual([]);
        // Every request after a fold carries the summary, framed, in front of the first kept person's message.
        const foldsSeen = events.filter((event) => event.type === "compacted");
        if (window <= 32_000) expect(foldsSeen.length).toBeGreaterThan(0);
        if (foldsSeen.length > 0) {
          const last = bodies.at(-1);
          const firstUser = last?.messages.find((message) => message.role === "user");
          const text = typeof firstUser?.content === "string" ? firstUser.content : JSON.stringify(firstUser?.content);
          expect(unframeSummary(text)).not.toBeNull();
          // `compacted.text` is the bare summary (docs/engine.md): the frame is the request's, not the event's.
          const lastFold = foldsSeen.at(-1);
          if (lastFold?.type === "compacted" && lastFold.text) {
            expect(lastFold.text.startsWith("<earlier-in-this-chat>")).toBe(false);
            expect(unframeSummary(text)?.summary).toBe(lastFold.text);
          }
        }
        // Between two folds, each request starts with the previous one's messages, byte for byte.
        const foldTurnStarts = new Set<number>();
        let requestIndex = -1;
        let between = false;
        for (const event of events) {
          if (event.type === "turn-start") [requestIndex, between] = [requestIndex + 1, false];
          if (event.type === "turn-end") between = true;
          // A fold ahead of the need lands between two turns: the next request is the first it changes.
          if (event.type === "compacted") foldTurnStarts.add(between ? requestIndex + 1 : requestIndex);
        }
        let prefixChecks = 0;
        for (let index = 1; index < bodies.length; index++) {
          if (foldTurnStarts.has(index)) continue;
          const previous = bodies[index - 1]?.messages ?? [];
          const current = bodies[index]?.messages ?? [];
          // The last message of the previous request may have been shortened only when a new limit started.
          const now = JSON.stringify(current.slice(0, previous.length - 1));
          const before = JSON.stringify(previous.slice(0, -1));
          if (now !== before) {
            // The only other change allowed: the turn being answered, alone and too big, got a text shortened.
            let at = 0;
            while (now[at] === before[at]) at++;
            expect(now.slice(at, at + 400)).toMatch(/\[\.\.\. \d+ characters left out \.\.\.\]/);
            continue;
          }
          prefixChecks += 1;
        }
        expect(prefixChecks).toBeGreaterThan(10);
        // The transcript file was written after every turn.
        expect(fileSizes).toHaveLength(turns.length);
        const file = JSON.parse(await readFile(join(folder, "api-sessions", "long.json"), "utf8"));
        expect(file.version).toBe(1);
        expect(file.factor).toBeGreaterThanOrEqual(1);
        if (foldsSeen.length > 0) expect(file.summary.firstKeptSeq).toBe(file.seqs[0]);
        const chat = await engine.loadChat("long");
        expect(chat.messages.length).toBeGreaterThanOrEqual(turns.length * 2);
        expect(chat.messages.map((message) => message.seq)).toEqual(chat.messages.map((_, index) => index));
      },
    );
  });

  describe("healing a too-long refusal", () => {
    const rows: Array<{ providerId: ProviderId; dialect: FakeDialect; row?: FakeOpenAIRow }> = [
      { providerId: "openai", dialect: "openai", row: "openai" },
      { providerId: "deepseek", dialect: "openai", row: "deepseek" },
      { providerId: "xai", dialect: "openai", row: "xai" },
      { providerId: "groq", dialect: "openai", row: "groq" },
      { providerId: "together", dialect: "openai", row: "together" },
      { providerId: "mistral", dialect: "openai", row: "mistral" },
      { providerId: "openrouter", dialect: "openai", row: "openrouter" },
      { providerId: "zhipu", dialect: "openai", row: "zhipu" },
      { providerId: "vllm", dialect: "openai", row: "vllm" },
      { providerId: "llama.cpp", dialect: "openai", row: "llama.cpp" },
      { providerId: "lmstudio", dialect: "openai", row: "lmstudio" },
      { providerId: "anthropic", dialect: "anthropic" },
      { providerId: "google", dialect: "google" },
      { providerId: "ollama", dialect: "ollama" },
    ];

    it.each(rows)(
      "given $providerId's real body once, should heal quietly, say so, and remember the window",
      async ({ providerId, dialect, row }) => {
        const { engine, server, store, script, provider } = await setup({
          dialect,
          ...(row ? { row } : {}),
          providerId,
          models: [{ id: "chat", window: 64_000 }],
          model: "chat",
        });
        // Small enough that no fold is due first (Ollama runs at 16K), so the refusal meets the chat's request.
        await store.appendLog("h", history.slice(0, 10));
        const body = loadProviderErrorBodies().find(
          (entry) => entry.provider === providerId && entry.kind === "too-long" && (entry.status ?? 400) >= 400,
        );
        expect(body).toBeDefined();
        server.refuseNext(1, body?.index ?? providerId);
        script.queue.push({ text: "The healed answer." });
        const events = await collect(engine.sendTurn({ chatId: "h", seq: 10, text: "And now?" }));
        const types = events.map((event) => event.type);
        expect(types).toContain("healed");
        expect(types).not.toContain("turn-problem");
        expect(types.at(-1)).toBe("turn-end");
        expect(events.at(-1)).toMatchObject({ status: "done" });
        const chat = await engine.loadChat("h");
        expect(chat.messages.at(-1)?.parts).toEqual([{ type: "text", text: "The healed answer." }]);
        expect(chat.healthNotes[0]?.kind).toBe("healed");
        // A window the refusal names is remembered for the model (the smaller of it and the list's wins).
        if (body?.window) expect(provider.windows.get(providerId, "chat")).toBe(body.window);
      },
    );

    it.each([
      { providerId: "openai" as const, row: "openai" as const },
      { providerId: "deepseek" as const, row: "deepseek" as const },
      { providerId: "xai" as const, row: "xai" as const },
    ])(
      "given $providerId, whose list names no window, serving a smaller one than the default, should heal with the named window and remember it for the next chat",
      async ({ providerId, row }) => {
        const { engine, store, script, provider } = await setup({
          row,
          providerId,
          models: [{ id: "chat", window: 8_000, advertisedWindow: 64_000 }],
          model: "chat",
        });
        await store.appendLog("h", history);
        script.queue.push({ text: "Healed." });
        const events = await collect(engine.sendTurn({ chatId: "h", seq: history.length, text: "Go on" }));
        expect(events.map((event) => event.type)).toContain("healed");
        expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
        expect(provider.windows.get(providerId, "chat")).toBe(8_000);
        // The next chat starts with the remembered window, and never needs healing.
        await store.appendLog("next", history);
        script.queue.push({ text: "Fits at once." });
        const next = await collect(engine.sendTurn({ chatId: "next", seq: history.length, text: "Hello" }));
        expect(next.map((event) => event.type)).not.toContain("healed");
        expect((await engine.loadChat("next")).contextUsage?.window).toBe(8_000);
      },
    );

    it("given two refusals and a bigger ready model, should give one too-long problem offering it, and keep the message", async () => {
      const { engine, server, store } = await setup({
        models: [
          { id: "chat", window: 16_000 },
          { id: "chat-200k", window: 200_000 },
        ],
        model: "chat",
      });
      await store.appendLog("p", history.slice(0, 10));
      server.refuseNext(2, "openrouter");
      const events = await collect(engine.sendTurn({ chatId: "p", seq: 10, text: "My important message" }));
      const problems = events.filter((event) => event.type === "turn-problem");
      expect(problems).toHaveLength(1);
      const problem = problems[0]?.type === "turn-problem" ? problems[0].problem : null;
      expect(problem?.kind).toBe("too-long");
      expect(problem?.next).toMatchObject({ type: "switch-model", model: { id: "chat-200k" }, readsTimes: 12.5 });
      expect(events.map((event) => event.type)).not.toContain("healed");
      const chat = await engine.loadChat("p");
      expect(chat.messages.at(-1)).toMatchObject({
        seq: 10,
        role: "user",
        parts: [{ type: "text", text: "My important message" }],
      });
      expect(chat.problem?.problem.kind).toBe("too-long");
    });

    it("given a too-long problem, should answer the same message on the bigger model without repeating it", async () => {
      const { engine, server, store, script, provider } = await setup({
        models: [
          { id: "chat", window: 16_000 },
          { id: "chat-200k", window: 200_000 },
        ],
        model: "chat",
      });
      await store.appendLog("s", history.slice(0, 10));
      server.refuseNext(2, "openrouter", { models: ["chat"] });
      await engine.sendTurn({ chatId: "s", seq: 10, text: "Answer me there" }).done;
      // Another engine over the same store (as a host does for another model) sees the problem too.
      const bigger = createApiEngine({ provider, model: "chat-200k", store });
      const before = await bigger.loadChat("s");
      expect(before.problem?.problem.kind).toBe("too-long");
      script.queue.push({ text: "Answered on the bigger model." });
      const end = await bigger.sendTurn({ chatId: "s", seq: 10, text: "Answer me there", retry: true }).done;
      expect(end.status).toBe("done");
      const chat = await bigger.loadChat("s");
      expect(chat.messages.slice(-2).map((message) => [message.seq, message.role])).toEqual([
        [10, "user"],
        [11, "assistant"],
      ]);
      expect(
        chat.messages.filter(
          (message) =>
            message.role === "user" && message.parts[0]?.type === "text" && message.parts[0].text === "Answer me there",
        ),
      ).toHaveLength(1);
      expect(chat.problem).toBeNull();
    });

    it("given two refusals and no bigger model, should offer a new chat carrying the person's message", async () => {
      const { engine, server, store } = await setup({
        models: [{ id: "chat", window: 16_000 }],
        model: "chat",
        cheapWindow: 16_000,
      });
      await store.appendLog("p", history.slice(0, 10));
      server.refuseNext(2, "openrouter");
      const events = await collect(engine.sendTurn({ chatId: "p", seq: 10, text: "Please keep me" }));
      const problem = events.find((event) => event.type === "turn-problem");
      expect(problem).toMatchObject({
        problem: { kind: "too-long", next: { type: "new-chat", message: "Please keep me" } },
      });
      // What the provider counted and what the estimate said, for the card to set side by side.
      const tooLong = problem?.type === "turn-problem" && problem.problem.kind === "too-long" ? problem.problem : null;
      expect(tooLong?.countedTokens).toBeGreaterThan(0);
      expect(tooLong?.estimatedTokens).toBeGreaterThan(0);
    });

    it("given a refusal caused by the answer room, should lower the answer room instead of folding", async () => {
      const { engine, server, store, script } = await setup({
        row: "vllm",
        providerId: "vllm",
        models: [{ id: "chat", window: 32_000 }],
        model: "chat",
      });
      await store.appendLog("o", history.slice(0, 4));
      server.refuseNext(1, {
        status: 400,
        body: JSON.stringify({
          object: "error",
          message:
            "This model's maximum context length is 32000 tokens. However, you requested 33500 tokens (1500 in the messages, 32000 in the completion). Please reduce the length of the messages or completion.",
          type: "BadRequestError",
          code: 400,
        }),
      });
      script.queue.push({ text: "Short answer." });
      const events = await collect(engine.sendTurn({ chatId: "o", seq: 4, text: "Go" }));
      expect(events.map((event) => event.type)).toContain("healed");
      expect(events.map((event) => event.type)).not.toContain("compacting");
      const maxTokens = server
        .chatRequests()
        .map((request) => request.body as { max_tokens?: number; max_completion_tokens?: number })
        .map((body) => body.max_tokens ?? body.max_completion_tokens);
      expect(maxTokens).toHaveLength(2);
      expect(maxTokens[1]).toBeLessThan(maxTokens[0] as number);
    });

    it("given a refusal after text has arrived, should not retry and should keep what was written", async () => {
      const { engine, server, script } = await setup({ models: [{ id: "chat", window: 32_000 }], model: "chat" });
      script.queue.push({ text: "Partial words that arrive before the failure." });
      server.failNext(1, "reset-mid-stream");
      const events = await collect(engine.sendTurn({ chatId: "r", seq: 0, text: "Hi" }));
      expect(events.map((event) => event.type)).toContain("turn-problem");
      expect(events.map((event) => event.type)).not.toContain("healed");
      expect(server.chatRequests()).toHaveLength(1);
    });
  });

  it("given a system prompt bigger than the window, should give one clear problem and send nothing", async () => {
    const { engine, server } = await setup({
      models: [{ id: "tiny", window: 1_000 }],
      model: "tiny",
      engine: { systemPrompt: "Follow these rules. ".repeat(400) },
    });
    const events = await collect(engine.sendTurn({ chatId: "t", seq: 0, text: "Hello" }));
    expect(events.map((event) => event.type)).toEqual(["turn-start", "turn-problem", "turn-end"]);
    expect(events[1]).toMatchObject({
      problem: { kind: "too-long", next: { type: "switch-model", model: { id: "cheap" } } },
    });
    expect(server.chatRequests()).toHaveLength(0);
  });

  it("should run tool rounds as requests of the same turn, each fitted", async () => {
    const { engine, server, script } = await setup({ models: [{ id: "chat", window: 32_000 }], model: "chat" });
    script.queue.push({
      text: "Let me look.",
      toolCalls: [{ id: "call-1", name: "read_file", arguments: '{"path":"a.ts"}' }],
    });
    const first = engine.sendTurn({ chatId: "tools", seq: 0, text: "What is in a.ts?" });
    await collect(first);
    expect((await first.done).status).toBe("tool-calls");
    script.queue.push({ text: "It exports one function." });
    const second = engine.sendTurn({
      chatId: "tools",
      seq: 2,
      text: "",
      toolResults: [{ type: "tool-result", callId: "call-1", name: "read_file", text: "export function a() {}" }],
    });
    await collect(second);
    expect((await second.done).status).toBe("done");
    const last = chatRequestBodies(server).at(-1);
    expect(JSON.stringify(last)).toContain("export function a() {}");
    const chat = await engine.loadChat("tools");
    expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  describe("compact()", () => {
    it("should fold all but the newest turn with the focus stated first to the summariser", async () => {
      const { engine, server, store } = await setup({ models: [{ id: "chat", window: 128_000 }], model: "chat" });
      await store.appendLog("m", history.slice(0, 12));
      const seen: EngineEvent[] = [];
      engine.subscribe((event) => seen.push(event));
      const result = await engine.capabilities.context.compact("m", { keep: "the question numbers" });
      expect(result.status).toBe("compacted");
      expect(result.status === "compacted" && result.summary).toMatchObject({
        firstKeptSeq: 10,
        reason: "manual",
        model: "cheap",
        modelName: "Cheap Summariser",
      });
      expect(result.status === "compacted" && result.summary.text).toContain("Kept as asked: the question numbers");
      expect(seen.map((event) => event.type)).toEqual(["compacting", "compacting", "compacted"]);
      // The fold begins, then its one piece is read.
      expect(seen[1]).toMatchObject({ type: "compacting", piece: 1, pieces: 1 });
      const summariser = server.chatRequests().filter((request) => request.model === "cheap");
      expect(summariser.length).toBeGreaterThan(0);
      expect((await engine.loadChat("m")).summary?.firstKeptSeq).toBe(10);
      expect(await engine.capabilities.context.compact("m")).toEqual({ status: "nothing-to-fold" });
    });

    it("given a too-long problem, should clear it with the fold, so that a reload no longer shows it", async () => {
      const { engine, server, store, provider } = await setup({
        models: [
          { id: "chat", window: 16_000 },
          { id: "chat-200k", window: 200_000 },
        ],
        model: "chat",
      });
      await store.appendLog("tl", history.slice(0, 10));
      server.refuseNext(2, "openrouter", { models: ["chat"] });
      await engine.sendTurn({ chatId: "tl", seq: 10, text: "Too long for this window" }).done;
      expect((await engine.loadChat("tl")).problem?.problem.kind).toBe("too-long");
      expect((await engine.capabilities.context.compact("tl")).status).toBe("compacted");
      expect((await engine.loadChat("tl")).problem).toBeNull();
      // Another engine over the same store reads the saved chat: the card stays gone.
      expect((await createApiEngine({ provider, model: "chat", store }).loadChat("tl")).problem).toBeNull();
    });

    it("given a provider with its own compaction, should hand it over", async () => {
      const handedOver: Array<string | undefined> = [];
      const { engine, store } = await setup({
        models: [{ id: "chat", window: 128_000 }],
        model: "chat",
        engine: {
          handOverCompaction: async (_chatId, keep) => {
            handedOver.push(keep);
            return true;
          },
        },
      });
      await store.appendLog("m", history.slice(0, 6));
      expect(await engine.capabilities.context.compact("m", { keep: "x" })).toEqual({ status: "handed-over" });
      expect(handedOver).toEqual(["x"]);
    });
  });

  describe("failures a turn survives", () => {
    it("given a store whose transcript save fails, should tell onError and still end the turn done", async () => {
      const store = createMemoryChatStore();
      const refused = new ChatStoreWriteError({ chatId: "s", location: "memory", cause: new RangeError("full") });
      const failingStore: typeof store = {
        ...store,
        writeTranscript: async () => {
          throw refused;
        },
      };
      const reported: Array<[unknown, unknown]> = [];
      const { engine, script } = await setup({
        models: [{ id: "chat", window: 128_000 }],
        model: "chat",
        engine: { store: failingStore, onError: (error, context) => reported.push([error, context]) },
      });
      script.queue.push({ text: "Answered all the same." });
      const end = await engine.sendTurn({ chatId: "s", seq: 0, text: "Hello" }).done;
      expect(end.status).toBe("done");
      expect(reported).toEqual([[refused, { during: "save", chatId: "s" }]]);
      // The log has every message; the transcript is rebuilt from it.
      expect((await store.readLog("s")).map((message) => message.role)).toEqual(["user", "assistant"]);
    });

    it("given a listener that throws, should tell onError and still reach the turn's end", async () => {
      const reported: Array<[unknown, unknown]> = [];
      const { engine, script } = await setup({
        models: [{ id: "chat", window: 128_000 }],
        model: "chat",
        engine: { onError: (error, context) => reported.push([error, context]) },
      });
      const bug = new TypeError("a listener's bug");
      engine.subscribe((event) => {
        if (event.type === "turn-start") throw bug;
      });
      script.queue.push({ text: "Hi." });
      expect((await engine.sendTurn({ chatId: "t", seq: 0, text: "Hello" }).done).status).toBe("done");
      expect(reported).toEqual([[bug, { during: "listener" }]]);
    });
  });

  describe("learning before forgetting", () => {
    const learningLog = chatLogFrom([
      ["I prefer short answers. My name is Ada.", "Noted, Ada."],
      ["We decided to use Postgres.", "Good choice; I always like Postgres."],
      ["What next?", "Tests."],
      ["Write them.", "Done."],
    ]);

    it("should give the learner only the person's words before the fold, once, and record how far it read", async () => {
      const learner = createMemoryLearner();
      const { engine, store } = await setup({
        models: [{ id: "chat", window: 128_000 }],
        model: "chat",
        engine: { learner },
      });
      await store.appendLog("l", learningLog);
      await engine.capabilities.context.compact("l");
      await expect.poll(() => learner.reviews.length).toBe(1);
      expect(learner.reviews[0]?.words.map((words) => words.seq)).toEqual([0, 2, 4]);
      expect(learner.memories.map((memory) => memory.text)).toEqual([
        "I prefer short answers.",
        "My name is Ada.",
        "We decided to use Postgres.",
      ]);
      await expect.poll(async () => (await store.readTranscript("l"))?.readUntil).toBe(6);
      // Nothing more to fold: the learner is not asked again.
      await engine.capabilities.context.compact("l");
      expect(learner.reviews).toHaveLength(1);
    });

    it("given a failing learner, should tell onError, mark nothing read and still fold", async () => {
      const learner = createMemoryLearner();
      learner.failNext();
      const reported: Array<[unknown, unknown]> = [];
      const { engine, store } = await setup({
        models: [{ id: "chat", window: 128_000 }],
        model: "chat",
        engine: { learner, onError: (error, context) => reported.push([error, context]) },
      });
      await store.appendLog("l", learningLog);
      expect((await engine.capabilities.context.compact("l")).status).toBe("compacted");
      await expect.poll(() => reported).toHaveLength(1);
      const [error, context] = reported[0] ?? [];
      expect(LearnerFailedError.isInstance(error)).toBe(true);
      expect(context).toEqual({ during: "learner", chatId: "l" });
      expect((await store.readTranscript("l"))?.readUntil).toBe(0);
    });

    it("given a chat that read something untrusted, should propose memories that wait for an OK", async () => {
      const learner = createMemoryLearner();
      const { engine, store, script } = await setup({
        models: [{ id: "chat", window: 128_000 }],
        model: "chat",
        engine: { learner },
      });
      await store.appendLog("u", learningLog.slice(0, 6));
      script.queue.push({ text: "Read it." });
      await engine.sendTurn({ chatId: "u", seq: 6, text: "Summarise this web page", untrusted: true }).done;
      await engine.capabilities.context.compact("u");
      await expect.poll(() => learner.memories.length).toBeGreaterThan(0);
      expect(learner.memories.every((memory) => memory.status === "waiting")).toBe(true);
    });
  });

  describe("aborts", () => {
    it("given an abort in the middle of a stream, should keep what was written and leave a consistent transcript", async () => {
      const { engine, script, store, provider } = await setup({
        models: [{ id: "chat", window: 32_000 }],
        model: "chat",
        chunkDelayMs: 5,
      });
      script.queue.push({ text: "word ".repeat(200) });
      const controller = new AbortController();
      const stream = engine.sendTurn({ chatId: "a", seq: 0, text: "Talk", abortSignal: controller.signal });
      let deltas = 0;
      for await (const event of stream) {
        if (event.type === "text-delta" && ++deltas === 3) controller.abort();
      }
      expect((await stream.done).status).toBe("aborted");
      // A fresh engine over the same store reads a consistent chat and goes on.
      const again = createApiEngine({ provider, model: "chat", store });
      const chat = await again.loadChat("a");
      expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
      script.queue.push({ text: "Next." });
      expect((await again.sendTurn({ chatId: "a", seq: 2, text: "Go on" }).done).status).toBe("done");
    });

    it("given a turn aborted while its fold is summarising, should end the turn aborted with the fold not applied", async () => {
      const { engine, store, provider } = await setup({
        models: [{ id: "chat", window: 8_000 }],
        model: "chat",
        chunkDelayMs: 10,
      });
      await store.appendLog("f", history);
      const controller = new AbortController();
      const events: EngineEvent[] = [];
      const stream = engine.sendTurn({
        chatId: "f",
        seq: history.length,
        text: "Go on",
        abortSignal: controller.signal,
      });
      for await (const event of stream) {
        events.push(event);
        if (event.type === "compacting") setTimeout(() => controller.abort(), 20);
      }
      expect((await stream.done).status).toBe("aborted");
      expect(events.map((event) => event.type)).toEqual(["turn-start", "compacting", "compaction-skipped", "turn-end"]);
      const chat = await createApiEngine({ provider, model: "chat", store }).loadChat("f");
      expect(chat.summary).toBeNull();
      expect(chat.messages.at(-1)).toMatchObject({ seq: history.length, role: "user" });
    });

    it("given an abort in the middle of a summary, should leave the chat unfolded and consistent", async () => {
      const { engine, store, provider } = await setup({
        models: [{ id: "chat", window: 128_000 }],
        model: "chat",
        chunkDelayMs: 10,
      });
      await store.appendLog("s", history.slice(0, 8));
      const controller = new AbortController();
      const compacting = engine.capabilities.context.compact("s", { abortSignal: controller.signal });
      const seen: EngineEvent[] = [];
      engine.subscribe((event) => seen.push(event));
      setTimeout(() => controller.abort(), 30);
      expect(await compacting).toEqual({ status: "aborted" });
      expect(seen.map((event) => event.type)).toEqual(["compacting", "compaction-skipped"]);
      const chat = await createApiEngine({ provider, model: "chat", store }).loadChat("s");
      expect(chat.summary).toBeNull();
      expect(chat.messages).toHaveLength(8);
    });
  });

  it("should refuse a seq that does not follow the log, and a second turn while one runs", async () => {
    const { engine, script } = await setup({
      models: [{ id: "chat", window: 32_000 }],
      model: "chat",
      chunkDelayMs: 2,
    });
    await expect(engine.sendTurn({ chatId: "q", seq: 5, text: "x" }).done).rejects.toMatchObject({
      name: "TurnSequenceError",
    });
    script.queue.push({ text: "one two three four five six" });
    const first = engine.sendTurn({ chatId: "q", seq: 0, text: "1" });
    // Busy, like a seq that does not follow, surfaces through the turn, never thrown at once.
    await expect(engine.sendTurn({ chatId: "q", seq: 2, text: "2" }).done).rejects.toThrow(/still answering/);
    await first.done;
    // Neither refused turn runs later: a next turn's end (after anything the chat's queue held) finds neither.
    script.queue.push({ text: "Next answer." });
    expect((await engine.sendTurn({ chatId: "q", seq: 2, text: "3" }).done).status).toBe("done");
    const chat = await engine.loadChat("q");
    expect(chat.messages.filter((message) => message.role === "user").map((message) => message.parts)).toEqual([
      [{ type: "text", text: "1" }],
      [{ type: "text", text: "3" }],
    ]);
  });

  it("given a model list that fails, should answer with the default window and not ask again at once", async () => {
    const { engine, server, script } = await setup({ models: [{ id: "chat", window: 32_000 }], model: "chat" });
    server.failNext(1, "http-500", { on: "models" });
    script.queue.push({ text: "Answered anyway." });
    expect((await engine.sendTurn({ chatId: "l", seq: 0, text: "Hi" }).done).status).toBe("done");
    expect((await engine.loadChat("l")).contextUsage?.window).toBe(128_000);
    const listRequests = server.requests.filter((request) => request.kind === "models").length;
    script.queue.push({ text: "Again." });
    await engine.sendTurn({ chatId: "l", seq: 2, text: "Again" }).done;
    expect(server.requests.filter((request) => request.kind === "models").length).toBe(listRequests);
  });

  it("should offer the models of the list, for a switch", async () => {
    const { engine } = await setup({
      models: [
        { id: "chat", window: 32_000 },
        { id: "big", window: 200_000 },
      ],
      model: "chat",
    });
    const list: readonly ModelInfo[] = await engine.listModels();
    expect(list.map((model) => [model.id, model.context])).toContainEqual(["big", 200_000]);
    engine.setModel("big");
    expect((await engine.loadChat("any")).contextUsage?.window).toBe(200_000);
  });
});
