import { defaultProblemTitle, type TurnInput, type TurnProblem } from "@conch/engine-client";
import { createMockChatStore, createMockEngine, type MockTurnScript } from "@conch/engine-client/mock";
import type { ContractTurn, EngineSetup, EngineUnderTest } from "./engine-contract.js";

/** The problem a turn ends with, as the API engine gives it over the fake provider. */
function problemOf(turn: ContractTurn, input: TurnInput): TurnProblem | undefined {
  switch (turn.problem) {
    case undefined:
      return undefined;
    case "too-long":
      return {
        kind: "too-long",
        title: defaultProblemTitle("too-long"),
        window: 16_000,
        next: { type: "new-chat", message: input.text },
      };
    case "offline":
      return { kind: "offline", title: defaultProblemTitle("offline"), next: { type: "retry" } };
    default:
      return turn.problem satisfies never;
  }
}

/** The mock engine playing `turns` for the engine contract; `another()` is a mock over the same chats. */
export async function mockEngineUnderTest(
  turns: readonly ContractTurn[],
  setup: EngineSetup = {},
): Promise<EngineUnderTest> {
  const seeds = Object.fromEntries(
    Object.entries(setup.chats ?? {}).map(([chatId, messages]) => [chatId, { messages: [...messages] }]),
  );
  const store = createMockChatStore(seeds);
  // One script for every engine over the store: the turns are played in order, whoever answers.
  let answered = 0;
  const script = (input: TurnInput): MockTurnScript => {
    const turn = turns[answered];
    answered += 1;
    if (!turn) return {};
    const problem = problemOf(turn, input);
    if (problem) return { problem, ...(turn.heal ? { healed: { provider: "mock", window: 8_192 } } : {}) };
    return {
      reply: turn.reply,
      ...(turn.fold ? { compaction: { summary: "The person sent two long messages." } } : {}),
      ...(turn.heal ? { healed: { provider: "mock", window: 8_192 } } : {}),
      ...(turn.slow ? { delayMs: 2 } : {}),
    };
  };
  const make = () => createMockEngine({ store, turns: (input) => script(input), chunkSize: 4 });
  return { engine: make(), another: make, longText: "A long message. ".repeat(40) };
}
