import {
  createReplayScript,
  type FakeModel,
  type FakeProvider,
  type FakeReply,
  startFakeProvider,
  tooLongBodyFor,
} from "@conch/fake-provider";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { chatLogFrom } from "../mock/long-chat.js";
import { createProvider } from "../providers/create-provider.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { createApiEngine } from "./api-engine.js";

// #14 fault 7: one implausible number must not disable a model for good; real small windows keep working.

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** `openrouter` lists each model's window; `openai` lists none (the default 128K applies). */
async function setup(
  models: readonly FakeModel[],
  replies: Array<Partial<FakeReply>> = [],
  row: "openrouter" | "openai" = "openrouter",
) {
  const script = createReplayScript(["cheap"]);
  const server = await startFakeProvider({
    dialect: "openai",
    row,
    models: [...models, { id: "cheap", window: 128_000 }],
    countTokens: (text) => countTokens(text),
    reply: async (request) => {
      const reply = await (typeof script.reply === "function" ? script.reply(request) : script.reply);
      const override = request.model === "cheap" ? undefined : replies.shift();
      return { ...reply, ...override };
    },
  });
  servers.push(server);
  const provider = createProvider(row, { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
  const store = createMemoryChatStore();
  const engine = createApiEngine({
    provider,
    model: "chat",
    store,
    systemPrompt: "You are a helpful assistant in a long chat.",
  });
  const chatRequests = () => server.chatRequests().filter((request) => request.model === "chat");
  return { server, provider, store, engine, chatRequests };
}

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const history = chatLogFrom(
  Array.from(
    { length: 2 },
    (_, index) =>
      [`Question ${index}: ${"tell me more ".repeat(60)}`, `Answer ${index}: ${"here it is ".repeat(80)}`] as const,
  ),
);

describe("usage reports no real request could produce", () => {
  it("should ignore 3,000,000 input tokens on a 128K model with a health note, and keep reaching the provider", async () => {
    const { engine, chatRequests } = await setup(
      [{ id: "chat", window: 128_000 }],
      [{ usage: { inputTokens: 3_000_000 } }],
    );
    const first = await collect(engine.sendTurn({ chatId: "c", seq: 0, text: "Hello" }));
    expect(first.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    const notes = first.flatMap((event) => (event.type === "health-note" ? [event.note] : []));
    expect(notes).toHaveLength(1);
    expect(notes[0]?.kind).toBe("usage-ignored");
    expect(notes[0]?.text).toContain("3000000 input tokens");
    const chat = await engine.loadChat("c");
    expect(chat.contextUsage?.factor).toBeLessThan(8);
    expect(chat.healthNotes[0]?.id).toBe(notes[0]?.id);
    const second = await engine.sendTurn({ chatId: "c", seq: 2, text: "Still there?" }).done;
    expect(second.status).toBe("done");
    expect(chatRequests()).toHaveLength(2);
  });

  it("should still raise the factor from a report a real tokenizer could give", async () => {
    const { engine, store } = await setup([{ id: "chat", window: 128_000 }]);
    await store.appendLog("plain", history);
    await engine.sendTurn({ chatId: "plain", seq: history.length, text: "Go on" }).done;
    const plain = (await engine.loadChat("plain")).contextUsage?.factor ?? 0;

    const doubled = await setup([{ id: "chat", window: 128_000 }], []);
    doubled.server.setReply((request) => ({ text: "Counted twice.", usage: { inputTokens: request.inputTokens * 2 } }));
    await doubled.store.appendLog("doubled", history);
    await doubled.engine.sendTurn({ chatId: "doubled", seq: history.length, text: "Go on" }).done;
    const raised = (await doubled.engine.loadChat("doubled")).contextUsage?.factor ?? 0;
    expect(plain).toBeGreaterThanOrEqual(1);
    expect(raised).toBeGreaterThan(plain * 1.3);
    expect((await doubled.engine.loadChat("doubled")).healthNotes).toEqual([]);
  });
});

describe("remembered windows against what requests served", () => {
  it("should doubt a 512-token window named after the model served more, and raise it at the next success", async () => {
    const { engine, server, store, provider, chatRequests } = await setup([{ id: "chat", window: 32_000 }]);
    await store.appendLog("w", history);
    expect((await engine.sendTurn({ chatId: "w", seq: history.length, text: "First" }).done).status).toBe("done");
    const served = (chatRequests().at(-1)?.body as { messages?: unknown[] } | undefined)?.messages?.length;
    expect(served).toBe(history.length + 2);
    // A refusal misprinting the window as 512 (the model has served far more already).
    const refusal = tooLongBodyFor("openai", { window: 512, inputTokens: 900, outputTokens: 0 });
    expect(refusal).not.toBeNull();
    server.refuseNext(1, refusal ?? "openai", { models: ["chat"] });
    const second = await engine.sendTurn({ chatId: "w", seq: history.length + 2, text: "Second" }).done;
    expect(second.status).toBe("done");
    // The adapter remembered what the refusal said; the engine does not plan with it.
    expect((await engine.loadChat("w")).contextUsage?.window).toBe(32_000);
    const long = `Third: ${"a longer question ".repeat(200)}`;
    const third = await engine.sendTurn({ chatId: "w", seq: history.length + 4, text: long }).done;
    expect(third.status).toBe("done");
    expect(third.contextUsage?.window).toBe(32_000);
    // That success served more than 512 tokens: the remembered window is raised to what it served.
    const usage = third.usage;
    expect(usage.inputTokens).toBeGreaterThan(512);
    expect(provider.windows.get("openrouter", "chat")).toBe(usage.inputTokens + usage.outputTokens);
  });

  it("should keep a real 512-token window working, listed or named by a refusal, never doubted on its own", async () => {
    const listed = await setup([{ id: "chat", window: 512 }]);
    const first = await collect(listed.engine.sendTurn({ chatId: "s", seq: 0, text: "Hi" }));
    expect(first.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    expect(await listed.engine.sendTurn({ chatId: "s", seq: 2, text: "And again?" }).done).toMatchObject({
      status: "done",
    });
    const bodies = listed.chatRequests().map((request) => request.body as { max_tokens?: number });
    expect(bodies).toHaveLength(2);
    expect(bodies.every((body) => (body.max_tokens ?? 0) > 0 && (body.max_tokens ?? 0) < 512)).toBe(true);

    // The list names no window; the server's real one is 512: the refusal is believed and remembered.
    const unlisted = await setup([{ id: "chat", window: 512, advertisedWindow: 64_000 }], [], "openai");
    const healed = await collect(unlisted.engine.sendTurn({ chatId: "u", seq: 0, text: "Hello there" }));
    expect(healed.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    expect(unlisted.provider.windows.get("openai", "chat")).toBe(512);
    const next = await unlisted.engine.sendTurn({ chatId: "u", seq: 2, text: "Once more" }).done;
    expect(next.status).toBe("done");
    expect(next.contextUsage?.window).toBe(512);
  });
});

describe("the factor across a fold", () => {
  async function factorAfterOneTurn(window: number) {
    const { engine, store } = await setup([{ id: "chat", window }]);
    const log = chatLogFrom(
      Array.from(
        { length: 30 },
        (_, index) => [`Question ${index}: ${"tell me more ".repeat(60)}`, `Answer ${index}`] as const,
      ),
    );
    await store.appendLog("f", log);
    expect((await engine.sendTurn({ chatId: "f", seq: log.length, text: "Go on" }).done).status).toBe("done");
    const chat = await engine.loadChat("f");
    return { factor: chat.contextUsage?.factor ?? 0, summary: chat.summary };
  }

  it("should compare the provider's count with what was sent, the summary the fold just wrote included", async () => {
    // The same chat, sent whole to a large window, gives the factor of this text with this tokenizer.
    const whole = await factorAfterOneTurn(128_000);
    expect(whole.summary).toBeNull();
    // Folded first at a small window: the request carries a new summary the fold plan never counted.
    const folded = await factorAfterOneTurn(8_000);
    expect(folded.summary?.text.length ?? 0).toBeGreaterThan(1_000);
    expect(folded.factor).toBeLessThanOrEqual(whole.factor * 1.05);
  });
});
