import { createReplayScript, type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import { createApiEngine } from "../api-engine/index.js";
import type { EngineEvent } from "../events.js";
import { createProvider } from "../providers/create-provider.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { maxPiecesPerFold } from "./summariser.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("a huge answer folded (fault 4)", () => {
  it(`should cost at most ${maxPiecesPerFold} summariser requests and say in a health note what was left out`, async () => {
    const script = createReplayScript(["cheap"]);
    const server = await startFakeProvider({
      dialect: "openai",
      row: "openrouter",
      models: [
        { id: "chat", window: 128_000 },
        { id: "cheap", window: 128_000 },
      ],
      // Streamed in pieces of 64 KB, not the default 16 characters: the fold is under test, not 190,000 deltas.
      chunkSize: 64 * 1024,
      countTokens: (text) => (text.length > 200_000 ? Math.ceil(text.length / 4) : countTokens(text)),
      reply: script.reply,
    });
    servers.push(server);
    const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
    const store = createMemoryChatStore();
    const engine = createApiEngine({ provider, model: "chat", store, systemPrompt: "You are a helpful assistant." });
    // 3 MB of distinct lines: about 130 pieces of 24,000 characters without the bound.
    const hugeAnswer = Array.from({ length: 40_000 }, (_, line) => `log line ${line}: ${"x".repeat(60)}`).join("\n");
    script.queue.push({ text: hugeAnswer });
    await collect(engine.sendTurn({ chatId: "c", seq: 0, text: "Print the whole build log" }));
    // The next turn cannot carry 3 MB: the engine folds the first turn before asking.
    script.queue.push({ text: "Done." });
    const seen = await collect(engine.sendTurn({ chatId: "c", seq: 2, text: "Thanks, and now?" }));

    expect(seen.map((event) => event.type)).toContain("compacted");
    expect(seen.at(-1)?.type).toBe("turn-end");
    const summariser = server.chatRequests().filter((request) => request.model === "cheap");
    expect(summariser.length).toBeGreaterThan(0);
    expect(summariser.length).toBeLessThanOrEqual(maxPiecesPerFold);
    const sentText = summariser.map((request) => JSON.stringify(request.body)).join("");
    // Head and tail of the long answer kept, its middle not sent.
    expect(sentText).toContain("log line 0:");
    expect(sentText).toContain("log line 39999:");
    expect(sentText).not.toContain("log line 20000:");
    const notes = seen.flatMap((event) => (event.type === "health-note" ? [event.note] : []));
    expect(notes).toHaveLength(1);
    expect(notes[0]?.text).toMatch(/^The summary was written from shortened texts: [\d,]+ characters/);
    const leftOut = Number(/([\d,]+) characters/.exec(notes[0]?.text ?? "")?.[1]?.replaceAll(",", ""));
    expect(leftOut).toBeGreaterThan(hugeAnswer.length / 2);
    expect(leftOut).toBeLessThan(hugeAnswer.length);
    expect((await engine.loadChat("c")).healthNotes.map((note) => note.id)).toContain(notes[0]?.id);
    // Nothing of the person's lost: the log still holds the answer whole.
    expect((await engine.loadChat("c")).messages[1]?.parts[0]).toEqual({ type: "text", text: hugeAnswer });
  }, 120_000);
});

describe("a huge answer folded when no model writes a summary (#26)", () => {
  it("should say so in one health note, and nothing of shortened texts no summary was written from", async () => {
    const answers = ["", "Done."];
    const server = await startFakeProvider({
      dialect: "openai",
      row: "openrouter",
      models: [
        { id: "chat", window: 128_000 },
        { id: "cheap", window: 128_000 },
      ],
      chunkSize: 64 * 1024,
      countTokens: (text) => Math.ceil(text.length / 4),
      // Every summariser request (told apart by its system message) is refused; the chat's answers are scripted.
      reply: (request) =>
        JSON.stringify(request.body).includes("You summarise the start of a chat")
          ? { text: "I'm sorry, I can't help with that." }
          : { text: answers.shift() ?? "Done." },
    });
    servers.push(server);
    const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
    const engine = createApiEngine({ provider, model: "chat", store: createMemoryChatStore() });
    answers[0] = Array.from({ length: 40_000 }, (_, line) => `log line ${line}: ${"x".repeat(60)}`).join("\n");
    await collect(engine.sendTurn({ chatId: "c", seq: 0, text: "Print the whole build log" }));
    const seen = await collect(engine.sendTurn({ chatId: "c", seq: 2, text: "Thanks, and now?" }));

    expect(seen.map((event) => event.type)).toContain("compacted");
    const notes = seen.flatMap((event) => (event.type === "health-note" ? [event.note] : []));
    expect(notes.map((note) => note.kind)).toEqual(["summary-failed"]);
    expect(notes[0]?.text).toMatch(/^No model wrote a summary/);
  }, 120_000);
});
