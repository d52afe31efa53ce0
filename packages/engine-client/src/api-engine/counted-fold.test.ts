import { createReplayScript, type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { computeBudget } from "../context/budget.js";
import { estimateTokens } from "../context/estimate.js";
import type { EngineEvent } from "../events.js";
import { createProvider } from "../providers/create-provider.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { createApiEngine } from "./api-engine.js";

// A tokenizer unlike BPE whose ratio depends on the text (#26; llama-server with stories260K measured Chinese 2.85×,
// English and tool output 2.0–2.95×): Han text here runs 3.4× the estimate, the rest 2.3×. The chat's factor is the
// highest ratio of a request near its budget, so after a Chinese turn it over-counts English by half; the part of a
// request the provider has counted is taken at its count.
const han = /[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]/gu;
const templateTokens = 40;
const countByScript = (text: string) => {
  const chinese = (text.match(han) ?? []).join("");
  const rest = text.replace(han, "");
  return Math.ceil(estimateTokens(chinese) * 3.4 + estimateTokens(rest) * 2.3) + templateTokens;
};
const window = 8_000;
const english = "The harbour office keeps the tide tables, the berth list and the pilot roster for the week. ".repeat(
  8,
);

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A Chinese turn over half the budget, then English turns until the second fold: what that fold was decided on. */
async function secondFoldOnEnglish(dialect: "openai" | "ollama"): Promise<{ wouldBe: number; largest: number }> {
  const script = createReplayScript(["cheap"]);
  // The server's count of each answer request (summaries aside).
  const counts: number[] = [];
  const server = await startFakeProvider({
    dialect,
    ...(dialect === "openai" ? { row: "openrouter" as const } : {}),
    models: [{ id: "small-vocab", window }],
    countTokens: countByScript,
    reply: (request) => {
      const reply = script.reply(request);
      if (!/<chat-lines>/.test(request.lastUserText)) counts.push(request.inputTokens);
      return reply;
    },
  });
  servers.push(server);
  const engine = createApiEngine({
    provider: createProvider(dialect === "openai" ? "openrouter" : "ollama", { baseURL: server.baseURL, local: true }),
    model: "small-vocab",
    store: createMemoryChatStore(),
  });
  let seq = 0;
  const send = async (text: string) => {
    script.queue.push({ text: "Noted." });
    const events: EngineEvent[] = [];
    for await (const event of engine.sendTurn({ chatId: "c", seq, text })) events.push(event);
    seq += 2;
    return events;
  };
  // Over half the budget: it teaches the near-budget factor, at the Chinese ratio.
  await send("港口办公室保存着本周的潮汐表、泊位表和引航员名单。".repeat(45));
  // English turns until the second fold (the first drops the Chinese turn).
  const folds: number[] = [];
  for (let turn = 0; turn < 40 && folds.length < 2; turn++) {
    const before = counts.length;
    const events = await send(english);
    if (events.some((event) => event.type === "compacted")) folds.push(before);
  }
  expect(folds).toHaveLength(2);
  // The request before the second fold, the new turn's message and answer added: what the fold was decided on.
  const lastBeforeFold = counts[(folds[1] as number) - 1] as number;
  return {
    wouldBe: lastBeforeFold + countByScript(english) + countByScript("Noted."),
    largest: Math.max(...counts),
  };
}

describe("folds on a tokenizer whose ratio depends on the text (#26)", () => {
  const budget = computeBudget({ window }).budget;

  it("should fold an English chat near its budget after a Chinese turn set the factor, not at 2.3/3.4 of it", async () => {
    const { wouldBe, largest } = await secondFoldOnEnglish("openai");
    // At estimate × factor the fold came when the English chat was 2.3/3.4 (68%) of the budget; counted, near it.
    expect(wouldBe).toBeGreaterThan(0.9 * budget);
    // And every request the provider answered fitted the window.
    expect(largest).toBeLessThan(window);
  });

  it("should not size a fold by Ollama's count, which leaves out what it had cached", async () => {
    const { wouldBe, largest } = await secondFoldOnEnglish("ollama");
    // Estimate × factor, as before the count was taken: early, never late.
    expect(wouldBe).toBeLessThan(0.85 * budget);
    expect(largest).toBeLessThan(window);
  });
});
