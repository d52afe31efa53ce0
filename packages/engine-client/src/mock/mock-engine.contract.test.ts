import { engineContract } from "@conch/fake-provider";
import { createMockChatStore, createMockEngine, type MockTurnScript } from "./mock-engine.js";

engineContract("mock engine", async (turns) => {
  const store = createMockChatStore();
  // One script for every engine over the store: the turns are played in order, whoever answers.
  let answered = 0;
  const script = (): MockTurnScript => {
    const turn = turns[answered];
    answered += 1;
    if (!turn) return {};
    return {
      reply: turn.reply,
      ...(turn.fold ? { compaction: { summary: "The person sent two long messages." } } : {}),
      ...(turn.heal ? { healed: { provider: "mock", window: 8_192 } } : {}),
      ...(turn.slow ? { delayMs: 2 } : {}),
    };
  };
  const make = () => createMockEngine({ store, turns: () => script(), chunkSize: 4 });
  return { engine: make(), another: make, longText: "A long message. ".repeat(40) };
});
