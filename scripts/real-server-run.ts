// One chat on a real llama-server through one of three rows: the API engine with createLlamaCpp, the API engine
// with createOpenAI against the same server's `/v1`, and `pnpm serve` (its own engine, reached with
// createRemoteEngine). Every request passes a recording proxy, so the server's own figures are read per turn.
import {
  createApiEngine,
  createLlamaCpp,
  createMemoryChatStore,
  createOpenAI,
  type Engine,
} from "@conch/engine-client";
import { createRemoteEngine } from "@conch/engine-client/remote";
import { type ServeProcess, startServe } from "../e2e/serve-helpers.js";
import type { StartedLlamaServer } from "./llama-server.js";
import { sendTurns, type TurnRecord } from "./real-server-chat.js";
import { type ChatFigures, chatFigures, type TurnExchanges } from "./real-server-figures.js";
import type { RealServerTurn } from "./real-server-turns.js";
import { type RecordingProxy, startRecordingProxy } from "./recording-proxy.js";

export const realServerRows = ["createLlamaCpp", "createOpenAI", "pnpm serve"] as const;
export type RealServerRow = (typeof realServerRows)[number];

/** The system prompt of every real chat: short, as a small local model's would be. */
export const realServerSystemPrompt = "You are a helpful assistant.";

export interface RealChat {
  readonly row: RealServerRow;
  readonly window: number;
  readonly records: readonly TurnRecord[];
  readonly turns: readonly TurnExchanges[];
  readonly figures: ChatFigures;
  /** Every exchange of this chat with the server (`/props` and `/models` included), in order. */
  readonly exchanges: readonly RecordingProxy["exchanges"][number][];
}

/** Sends `turns` on a new chat through `row` to `server`, every request through a recording proxy of its own. */
export async function runRealChat(options: {
  readonly server: StartedLlamaServer;
  readonly row: RealServerRow;
  readonly turns: readonly RealServerTurn[];
  readonly onTurn?: (record: TurnRecord, exchanges: TurnExchanges["exchanges"]) => void;
}): Promise<RealChat> {
  const { server, row } = options;
  const proxy = await startRecordingProxy(server.origin);
  let serve: ServeProcess | null = null;
  try {
    let engine: Engine;
    switch (row) {
      case "createLlamaCpp":
        engine = createApiEngine({
          provider: createLlamaCpp({ baseURL: `${proxy.origin}/v1` }),
          model: server.alias,
          store: createMemoryChatStore(),
          systemPrompt: realServerSystemPrompt,
        });
        break;
      case "createOpenAI":
        engine = createApiEngine({
          // OpenAI's row lists no window: the engine starts from the local default and learns the real one
          // from the server's first refusal.
          provider: createOpenAI({ baseURL: `${proxy.origin}/v1` }),
          model: server.alias,
          store: createMemoryChatStore(),
          systemPrompt: realServerSystemPrompt,
        });
        break;
      case "pnpm serve":
        // Over the provider's model list of a real local model: it may take a while to answer at first.
        serve = await startServe(
          {
            NACRE_PROVIDER: "llama.cpp",
            NACRE_BASE_URL: `${proxy.origin}/v1`,
            NACRE_MODEL: server.alias,
            NACRE_SERVER_TOKENS: "",
          },
          ["--no-build"],
          { timeoutMs: 180_000 },
        );
        engine = await createRemoteEngine({ baseURL: `${serve.url}/api/engine`, model: server.alias });
        break;
      default:
        throw new Error(`unknown row ${row satisfies never}`);
    }
    const turns: TurnExchanges[] = [];
    let seen = proxy.exchanges.length;
    const chatId = `real-${row.replace(/\W+/g, "-")}-${server.window}`;
    const records = await sendTurns(engine, chatId, options.turns, async (record) => {
      await proxy.settled();
      const exchanges = proxy.exchanges.slice(seen);
      seen = proxy.exchanges.length;
      turns.push({ record, exchanges });
      options.onTurn?.(record, exchanges);
    });
    // The fold ahead of the last turn is no turn's work: stopped, so that it does not run into the next chat.
    engine.capabilities.context?.stopFoldAhead?.(chatId);
    const figures = await chatFigures(turns, server.window, (text) => server.tokenize(text));
    return { row, window: server.window, records, turns, figures, exchanges: [...proxy.exchanges] };
  } finally {
    await serve?.stop();
    await proxy.close();
    // The next chat on this server starts once nothing of this one runs there (`pnpm serve`'s own fold ahead
    // included): the server's slots share one window, and two chats at once overflow a small one.
    await server.idle();
  }
}
