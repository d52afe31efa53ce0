import { createReplayScript, type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import { chatLogFrom } from "../mock/long-chat.js";
import { createProvider } from "../providers/create-provider.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { createApiEngine } from "./api-engine.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const history = chatLogFrom(
  Array.from(
    { length: 30 },
    (_, index) =>
      [`Question ${index}: ${"tell me more ".repeat(60)}`, `Answer ${index}: ${"here it is ".repeat(80)}`] as const,
  ),
);

async function factorAfterOneTurn(window: number) {
  const script = createReplayScript(["cheap"]);
  const server = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: [
      { id: "chat", window },
      { id: "cheap", window: 128_000 },
    ],
    countTokens: (text) => countTokens(text),
    reply: script.reply,
  });
  servers.push(server);
  const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
  const store = createMemoryChatStore();
  await store.appendLog("f", history);
  const engine = createApiEngine({ provider, model: "chat", store, systemPrompt: "You are a helpful assistant." });
  const end = await engine.sendTurn({ chatId: "f", seq: history.length, text: "Go on" }).done;
  expect(end.status).toBe("done");
  const chat = await engine.loadChat("f");
  return { factor: chat.contextUsage?.factor ?? 0, summary: chat.summary };
}

describe("the factor across a fold", () => {
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
