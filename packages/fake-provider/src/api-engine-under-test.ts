import {
  type ApiEngine,
  type ApiEngineOptions,
  type ChatStore,
  createApiEngine,
  createMemoryChatStore,
  createProvider,
  type ProviderAdapter,
} from "@conch/engine-client";
import { computeBudget, estimateTokens } from "@conch/engine-client/context";
import type { ContractTurn, EngineSetup, EngineUnderTest } from "./engine-contract.js";
import { startFakeProvider } from "./fake-provider-server.js";
import type { FakeProvider } from "./fake-provider-types.js";
import { createReplayScript } from "./replay.js";

/** The chat model's window; a long message is about a third of its budget: the third folds, the second not. */
const chatWindow = 16_000;
const longText = textOfTokens(Math.floor(computeBudget({ window: chatWindow }).budget * 0.35));

function textOfTokens(tokens: number): string {
  const words: string[] = [];
  let text = "";
  while (estimateTokens(text) < tokens) {
    for (let index = 0; index < 100; index += 1) words.push(`word${words.length % 97}`);
    text = words.join(" ");
  }
  return text;
}

/** What {@link apiEngineUnderTest} set up, for tests that look further (the fake server, the store). */
export interface ApiEngineUnderTest extends EngineUnderTest {
  readonly engine: ApiEngine;
  another(): ApiEngine;
  readonly server: FakeProvider;
  readonly store: ChatStore;
  readonly provider: ProviderAdapter;
}

/**
 * The API engine over the fake provider on loopback (real HTTP), playing `turns` for the engine contract:
 * replies in order, a too-long refusal (the provider's real body) before a `heal` turn's first request, long
 * answers streamed slowly for `slow` turns. The summariser is the fake's `cheap` model.
 */
export async function apiEngineUnderTest(
  turns: readonly ContractTurn[],
  options: EngineSetup & { readonly store?: ChatStore; readonly engine?: Partial<ApiEngineOptions> } = {},
): Promise<ApiEngineUnderTest> {
  const script = createReplayScript(["cheap"]);
  let answered = 0;
  let server: FakeProvider | null = null;
  /**
   * Queues what the next turn meets before its answer: a refusal when it heals; two refusals (the heal does
   * not help) or an unreachable provider when it ends with a problem (then it is played, and so is the next).
   */
  const armHeal = () => {
    for (let turn = turns[answered]; turn?.problem !== undefined; turn = turns[answered]) {
      if (turn.problem === "too-long") server?.refuseNext(2, "openrouter", { models: ["chat"] });
      else server?.failNext(1, "connection-reset", { on: "chat" });
      answered += 1;
    }
    if (turns[answered]?.heal) server?.refuseNext(1, "openrouter", { models: ["chat"] });
  };
  server = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: [
      { id: "chat", window: chatWindow, displayName: "Chat" },
      { id: "cheap", window: 128_000, displayName: "Cheap Summariser" },
    ],
    reply(request) {
      if (request.model !== "chat") return script.reply(request);
      const turn = turns[answered];
      answered += 1;
      armHeal();
      return { text: turn?.reply ?? "(no reply scripted)" };
    },
    chunkSize: 8,
    // Slow enough to abort or send into a long answer; a short one still ends in a few pieces.
    chunkDelayMs: 2,
  });
  armHeal();
  const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
  const store = options.store ?? createMemoryChatStore();
  for (const [chatId, messages] of Object.entries(options.chats ?? {})) await store.appendLog(chatId, messages);
  const make = () =>
    createApiEngine({
      provider,
      model: "chat",
      store,
      systemPrompt: "You are a helpful assistant in a long chat.",
      ...options.engine,
    });
  const running = server;
  return {
    engine: make(),
    another: make,
    longText,
    server: running,
    store,
    provider,
    close: () => running.close(),
  };
}
