import { chatLogFrom, createMockEngine, generateLongChatScript, type MockEngine } from "@conch/engine-client/mock";

export const demoChatId = "demo";

/**
 * The demo chat: 24 turns already in the log, the first 20 of them folded into a summary, and a script
 * for what the person types next (a fold before the first typed turn, then plain answers).
 */
export function createDemoEngine(options: { delayMs?: number } = {}): MockEngine {
  const history = generateLongChatScript({ turns: 24, compactEvery: 0, seed: 3 });
  const pairs = history.prompts.map((prompt, index) => [prompt, history.turns[index]?.reply ?? ""] as const);
  const messages = chatLogFrom(pairs);
  const firstKeptSeq = 40;
  return createMockEngine({
    delayMs: options.delayMs ?? 25,
    chunkSize: 6,
    compactionDelayMs: (options.delayMs ?? 25) * 20,
    chats: {
      [demoChatId]: {
        messages,
        summary: {
          text: "The person is reviewing a web app module by module: the invoice export, the login page, the nightly backup and the search index were explained; tests were written for the CSV importer. Still open: the rate limiter's limits.",
          model: "mock-small",
          firstKeptSeq,
          reason: "budget",
          before: { messages: 48, tokens: 2400 },
          after: { messages: 8, tokens: 520 },
          at: 0,
        },
      },
    },
    turns: [
      {
        compaction: {
          summary:
            "The person reviewed the whole web app: the invoice export, the login page, the nightly backup, the search index and the CSV importer are explained and tested. Still open: the rate limiter's limits, and the dark theme.",
          keepTurns: 2,
        },
        reply:
          "Folded the start of the chat into a summary; here is the answer to your new question, streamed piece by piece.",
      },
    ],
  });
}
