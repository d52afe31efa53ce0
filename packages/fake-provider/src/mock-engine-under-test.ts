import { createMockChatStore, createMockEngine, type MockTurnScript } from "@conch/engine-client/mock";
import type { ContractTurn, EngineUnderTest } from "./engine-contract.js";

/** The mock engine playing `turns` for the engine contract; `another()` is a mock over the same chats. */
export async function mockEngineUnderTest(turns: readonly ContractTurn[]): Promise<EngineUnderTest> {
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
}
