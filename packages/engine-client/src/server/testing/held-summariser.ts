// The fold-ahead tests' fake provider (the API engine's own and the remote engine's): a chat model that answers at
// once and a summariser held at a gate until the test opens it, so that a test sees an engine while its fold is
// still running.
import { createReplayScript, type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import { computeBudget } from "../../context/budget.js";
import { estimateTokens } from "../../context/estimate.js";
import { createProvider } from "../../providers/create-provider.js";

/** The chat model's window. */
export const heldSummariserChatWindow = 16_000;

/** About a third of the chat model's budget: after two such turns, the next (a message of the usual size) would have to fold. */
export const longTurnText = (() => {
  const target = Math.floor(computeBudget({ window: heldSummariserChatWindow }).budget * 0.35);
  let text = "";
  for (let word = 0; estimateTokens(text) < target; word += 1) text += `word${word % 97} `;
  return text;
})();

const isSummariserRequest = (text: string) => /<chat-lines>/.test(text);

export interface HeldSummariser {
  readonly server: FakeProvider;
  /** How many summaries were asked for; while `failSummaries` is set, each comes back empty (the fold fails). */
  readonly state: { summaries: number; failSummaries: boolean };
  /** The provider an engine uses: the chat model is `chat`, the summariser `cheap` (the cheapest model). */
  provider(local?: boolean): ReturnType<typeof createProvider>;
  /** Holds the summaries asked for from now on, until `openGate`. */
  closeGate(): void;
  openGate(): void;
  /** The chat model's requests (the answers), in order. */
  answers(): ReturnType<FakeProvider["chatRequests"]>;
}

/**
 * Starts the fake provider (OpenAI's dialect, as OpenRouter's row): `chat` answers "An answer.", the summariser's
 * requests wait at the gate (`held`: closed from the start; open by default) and are answered by a replay script.
 * Close it with `server.close()`.
 */
export async function startHeldSummariser(options: { readonly held?: boolean } = {}): Promise<HeldSummariser> {
  const script = createReplayScript(["cheap"]);
  let openGate: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();
  const closeGate = () => {
    gate = new Promise((resolve) => {
      openGate = resolve;
    });
  };
  if (options.held) closeGate();
  const state = { summaries: 0, failSummaries: false };
  const server = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: [
      { id: "chat", window: heldSummariserChatWindow, displayName: "Chat" },
      { id: "cheap", window: 128_000, displayName: "Cheap Summariser" },
    ],
    async reply(request) {
      if (!isSummariserRequest(request.lastUserText)) return { text: "An answer." };
      state.summaries += 1;
      // A summariser that takes time: it answers once the test opens the gate.
      await gate;
      return state.failSummaries ? { text: "" } : script.reply(request);
    },
  });
  return {
    server,
    state,
    provider: (local = false) =>
      createProvider("openrouter", { baseURL: server.baseURL, local, cheapestModel: "cheap" }),
    closeGate,
    openGate: () => openGate(),
    answers: () => server.chatRequests().filter((request) => !isSummariserRequest(JSON.stringify(request.body))),
  };
}
