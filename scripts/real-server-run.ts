// One chat on a real llama-server through one of three rows: the API engine with createLlamaCpp, the API engine
// with createOpenAI against the same server's `/v1`, and `pnpm serve` (its own engine, reached with
// createRemoteEngine). Every request passes a recording proxy, so the server's own figures are read per turn.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createApiEngine,
  createLlamaCpp,
  createMemoryChatStore,
  createOpenAI,
  type Engine,
} from "@conch/engine-client";
import { createRemoteEngine } from "@conch/engine-client/remote";
import { freePort, type StartedLlamaServer } from "./llama-server.js";
import { sendTurns, type TurnRecord } from "./real-server-chat.js";
import { type ChatFigures, chatFigures, type TurnExchanges } from "./real-server-figures.js";
import type { RealServerTurn } from "./real-server-turns.js";
import { type RecordingProxy, startRecordingProxy } from "./recording-proxy.js";

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

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

interface ServeProcess {
  readonly url: string;
  stop(): Promise<void>;
}

/** `pnpm serve` (its script) on a free port over the given provider, chats in a fresh PGlite folder. */
async function startServe(env: Record<string, string>): Promise<ServeProcess> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), "nacre-real-serve-"));
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=source", "--import", "tsx", "scripts/serve.ts", "--port", String(port), "--no-build"],
    {
      cwd: repositoryRoot,
      env: { ...process.env, NACRE_DATA_DIR: dataDir, DATABASE_URL: "", NACRE_SERVER_TOKENS: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pnpm serve did not start within 180 s:\n${output}`)), 180_000);
    const read = (chunk: unknown) => {
      output += String(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`pnpm serve exited:\n${output}`));
    });
  });
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
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
        serve = await startServe({
          NACRE_PROVIDER: "llama.cpp",
          NACRE_BASE_URL: `${proxy.origin}/v1`,
          NACRE_MODEL: server.alias,
        });
        engine = await createRemoteEngine({ baseURL: `${serve.url}/api/engine`, model: server.alias });
        break;
      default:
        throw new Error(`unknown row ${row satisfies never}`);
    }
    const turns: TurnExchanges[] = [];
    let seen = proxy.exchanges.length;
    const records = await sendTurns(
      engine,
      `real-${row.replace(/\W+/g, "-")}-${server.window}`,
      options.turns,
      async (record) => {
        await proxy.settled();
        const exchanges = proxy.exchanges.slice(seen);
        seen = proxy.exchanges.length;
        turns.push({ record, exchanges });
        options.onTurn?.(record, exchanges);
      },
    );
    const figures = await chatFigures(turns, server.window, (text) => server.tokenize(text));
    return { row, window: server.window, records, turns, figures, exchanges: [...proxy.exchanges] };
  } finally {
    await serve?.stop();
    await proxy.close();
  }
}
