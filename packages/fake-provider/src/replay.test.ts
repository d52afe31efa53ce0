import { createApiEngine, createMemoryChatStore, createProvider, type EngineEvent } from "@conch/engine-client";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeProvider } from "./fake-provider-server.js";
import type { FakeProvider } from "./fake-provider-types.js";
import { createReplayScript, replayTurns } from "./replay.js";
import type { RecordedTurn } from "./scripted-models.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe("replayTurns", () => {
  it("should keep running totals and only the last turn's events, handing every event to onEvent", async () => {
    const script = createReplayScript(["cheap"]);
    const server = await startFakeProvider({
      dialect: "openai",
      row: "openai",
      models: [{ id: "chat", window: 128_000 }],
      countTokens: (text) => countTokens(text),
      reply: script.reply,
    });
    servers.push(server);
    const provider = createProvider("openai", { baseURL: server.baseURL, local: false });
    const engine = createApiEngine({ provider, model: "chat", store: createMemoryChatStore() });
    const turns: RecordedTurn[] = Array.from({ length: 40 }, (_, index) => ({
      person: `question ${index}`,
      rounds:
        index % 10 === 9
          ? [
              { reply: `looking ${index}`, toolResults: [`output ${index}`] },
              { reply: `answer ${index}`, toolResults: [] },
            ]
          : [{ reply: `answer ${index}`, toolResults: [] }],
    }));
    const everyEvent: EngineEvent[] = [];
    const lastTurnSizes: number[] = [];
    const stats = await replayTurns(engine, "c", turns, script, {
      onEvent: (event) => everyEvent.push(event),
      onTurn: (_index, current) => {
        lastTurnSizes.push(current.lastTurnEvents.length);
      },
    });

    expect(stats).toMatchObject({ turns: 40, requests: 44, folds: 0, heals: 0, problems: 0 });
    expect(everyEvent.filter((event) => event.type === "turn-start")).toHaveLength(44);
    // One turn's events, never the replay's: the last turn was a tool turn, of two rounds.
    expect(stats.lastTurnEvents.filter((event) => event.type === "turn-start")).toHaveLength(2);
    expect(stats.lastTurnEvents.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    expect(Math.max(...lastTurnSizes)).toBeLessThan(everyEvent.length / 10);
    expect(lastTurnSizes.reduce((sum, size) => sum + size, 0)).toBe(everyEvent.length);
  });
});
