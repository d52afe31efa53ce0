import { createReplayScript, type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { estimateTokens } from "../context/estimate.js";
import type { EngineEvent } from "../events.js";
import { createProvider } from "../providers/create-provider.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import type { TranscriptFile } from "../transcript/transcript-file.js";
import { createApiEngine } from "./api-engine.js";

// A tokenizer unlike BPE, as llama.cpp's llama-server with a 512-token vocabulary showed it (#26): long text runs
// 2.5× the estimate, and the chat template costs a fixed 40 tokens a request. A short request runs 4–7× the
// estimate; that ratio must not size a long chat.
const contentRatio = 2.5;
const templateTokens = 40;
const countLikeSmallVocabulary = (text: string) => Math.ceil(estimateTokens(text) * contentRatio) + templateTokens;

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/**
 * An API engine over the fake provider, whose one model `small-vocab` has `window` and counts a request's tokens
 * with `countTokens`; `newEngine()` makes another on the same provider and store (a later reader of the chat).
 */
async function setup(window: number, countTokens: (text: string) => number = countLikeSmallVocabulary) {
  const script = createReplayScript(["cheap"]);
  const server = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: [{ id: "small-vocab", window }],
    countTokens,
    reply: script.reply,
  });
  servers.push(server);
  const store = createMemoryChatStore();
  const provider = createProvider("openrouter", { baseURL: server.baseURL, local: true });
  const newEngine = () => createApiEngine({ provider, model: "small-vocab", store });
  return { engine: newEngine(), newEngine, store, script };
}

async function send(engine: ReturnType<typeof createApiEngine>, chatId: string, seq: number, text: string) {
  const events: EngineEvent[] = [];
  for await (const event of engine.sendTurn({ chatId, seq, text })) events.push(event);
  const end = events.findLast((event) => event.type === "turn-end");
  if (end?.type !== "turn-end") throw new Error("no turn-end");
  return end;
}

const longText = "The harbour office keeps the tide tables, the berth list and the pilot roster for the week. ".repeat(
  40,
);

describe("the sizing factor (a tokenizer unlike BPE)", () => {
  describe("given a short first message, then a long one", () => {
    it("should size the chat with the long request's ratio, not the short one's, and keep `factor` as it was", async () => {
      const { engine, store, script } = await setup(16_000);
      script.queue.push({ text: "Hello." }, { text: "Noted." });
      await send(engine, "c", 0, "Hi there");
      const afterShort = await store.readTranscript("c");
      // The short request alone ran 4× and more: `factor` keeps every request's ratio, for older readers.
      expect(afterShort?.factor).toBeGreaterThan(4);
      const end = await send(engine, "c", 2, longText);
      const factor = end.contextUsage?.factor ?? 0;
      // Sized with the long request's own ratio (content 2.5×, the template's 40 tokens spread over it).
      expect(factor).toBeGreaterThan(contentRatio);
      expect(factor).toBeLessThan(contentRatio * 1.25);
      const file = (await store.readTranscript("c")) as TranscriptFile & { sizingFactor?: number };
      expect(file.factor).toBeGreaterThan(4);
      expect(file.sizingFactor).toBeCloseTo(factor, 5);
      // What the next request is sized as is what the server counts, within the margin.
      const usage = end.contextUsage;
      expect(usage?.usedTokens).toBeGreaterThan(0);
    });
  });

  describe("given a chat whose stored factor is locked high by short requests (written before the sizing factor)", () => {
    it("should recover: sized with the stored factor until a long request is answered, then with that one's", async () => {
      const { engine, newEngine, store, script } = await setup(16_000);
      script.queue.push({ text: "Hello." });
      await send(engine, "c", 0, "Hi there");
      const written = (await store.readTranscript("c")) as TranscriptFile & { sizingFactor?: number };
      const { sizingFactor: _dropped, ...older } = { ...written, factor: 6.4 };
      await store.writeTranscript("c", older as TranscriptFile);
      const reader = newEngine();
      expect((await reader.loadChat("c")).contextUsage?.factor).toBe(6.4);
      script.queue.push({ text: "Noted." });
      const end = await send(reader, "c", 2, longText);
      expect(end.contextUsage?.factor).toBeLessThan(contentRatio * 1.25);
      // `factor` is never lowered on disk.
      expect((await store.readTranscript("c"))?.factor).toBe(6.4);
    });
  });

  describe("given a Chinese turn over an eighth of the window, then English near the budget (#26)", () => {
    it("should size the chat with the near-budget request's ratio, not the Chinese turn's", async () => {
      // Han text runs 2.9× the estimate, the rest 2.3× (llama-server with stories260K measured 2.85× and 2.2–2.6×).
      const han = /[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]/gu;
      const countByScript = (text: string) => {
        const chinese = (text.match(han) ?? []).join("");
        const rest = text.replace(han, "");
        return Math.ceil(estimateTokens(chinese) * 2.9 + estimateTokens(rest) * 2.3) + templateTokens;
      };
      const { engine, store, script } = await setup(8_000, countByScript);
      script.queue.push({ text: "Noted." }, { text: "Noted." });
      // About 1,200 real tokens: over an eighth of the 8,000 window, under half of its 6,000 budget.
      const chineseTurn = await send(engine, "c", 0, "港口办公室保存着本周的潮汐表、泊位表和引航员名单。".repeat(16));
      const chineseFactor = chineseTurn.contextUsage?.factor ?? 0;
      expect(chineseFactor).toBeGreaterThan(2.8);
      // With it, well over half the budget, under the budget by the Chinese turn's ratio (no fold).
      const end = await send(engine, "c", 2, longText + longText.slice(0, longText.length / 2));
      const file = (await store.readTranscript("c")) as TranscriptFile & {
        sizingFactor?: number;
        nearBudgetFactor?: number;
      };
      expect(file.sizingFactor).toBeCloseTo(chineseFactor, 5);
      expect(file.nearBudgetFactor).toBeLessThan(chineseFactor * 0.9);
      expect(end.contextUsage?.factor).toBeCloseTo(file.nearBudgetFactor ?? 0, 5);
    });
  });
});
