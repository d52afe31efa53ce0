// Turns under load (issue #32): many people's turns at once over real HTTP on 127.0.0.1, against one handler in
// this process, on PGlite (the in-process running turns, as `pnpm serve` without DATABASE_URL) and on Postgres
// (its shared running turns, as `pnpm serve` with DATABASE_URL). The provider answers at once, so only the
// server's own work shows: the handler, the engine, the store, the sockets.
import { Agent, request as httpRequest } from "node:http";
import { type ChatStore, createApiEngine, type ProviderAdapter } from "@conch/engine-client";
import {
  createPostgresChatStore,
  createPostgresRunningTurns,
  type PostgresChatStore,
  type SqlDatabase,
} from "@conch/engine-client/postgres";
import { createEngineHandler, type RunningTurns } from "@conch/engine-client/server";
import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { serve } from "srvx";
import { percentile, round } from "../stats.js";
import type { Table } from "../table.js";

/** One level of load: `concurrent` turns kept running at once, each on a chat of its own. */
export interface LoadFigures {
  readonly concurrent: number;
  readonly people: number;
  readonly turns: number;
  /** Turns whose response was not a 200 stream ending in a `done` turn-end (the chat sends no more). */
  readonly failed: number;
  /** Messages of turns that ended `done` missing from their chat's log at the end (each turn stores two). */
  readonly lost: number;
  readonly turnsPerSecond: number;
  /** ms from the POST to its stream's turn-end. */
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
  /** The first few failures, as the client saw them. */
  readonly failures: readonly string[];
}

/** Where the turns go: a database, and the handler's running turns (the in-process ones when absent). */
export interface LoadTarget {
  readonly name: string;
  readonly db: SqlDatabase;
  readonly runningTurns?: RunningTurns;
}

/** People at a level: four turns at once each (half the server's bound of 8), one person for one turn. */
const peopleAt = (concurrent: number) => Math.max(1, Math.ceil(concurrent / 4));

/** Keep-alive connections as a browser keeps them: one per turn in flight, used again for the chat's next turn. */
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

function post(url: string, person: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "x-person": person } },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
        response.on("error", reject);
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
}

/**
 * Runs `turnsEach` turns one after another on each of `concurrent` chats at once (a closed loop: a chat's next
 * turn is sent when its last one's stream ended), through real HTTP; every chat already holds `history` messages
 * (written by `seed`), and every log is read at the end to count what a `done` turn failed to store.
 */
export async function runLoad(
  target: LoadTarget,
  options: {
    readonly concurrent: number;
    readonly turnsEach: number;
    readonly tag: string;
    readonly provider: ProviderAdapter;
    readonly history: number;
    readonly seed: (store: ChatStore, chatId: string, length: number) => Promise<void>;
  },
): Promise<LoadFigures> {
  const { concurrent, turnsEach, tag, provider, history } = options;
  const stores = new Map<string, PostgresChatStore>();
  const storeOf = (userId: string) => {
    let store = stores.get(userId);
    if (!store) {
      store = createPostgresChatStore({ db: target.db, userId });
      stores.set(userId, store);
    }
    return store;
  };
  const handler = createEngineHandler({
    engineFor: (userId) => createApiEngine({ provider, model: "chat", store: storeOf(userId) }),
    authorize: (request) => ({ userId: request.headers.get("x-person") ?? "nobody" }),
    listModels: () => provider.listModels(),
    // The bench's people send far more than a person would: the bound on turns a minute would refuse them.
    bounds: { turnsPerMinute: 1_000_000 },
    ...(target.runningTurns ? { runningTurns: target.runningTurns } : {}),
  });
  const people = peopleAt(concurrent);
  const chats = Array.from({ length: concurrent }, (_, index) => ({
    person: `${tag}-person-${index % people}`,
    chatId: `${tag}-chat-${index}`,
    done: 0,
  }));
  for (const chat of chats) await options.seed(storeOf(chat.person), chat.chatId, history);
  const server = serve({ fetch: handler, port: 0, hostname: "127.0.0.1", silent: true, gracefulShutdown: false });
  await server.ready();
  const origin = new URL(server.url as string).origin;
  const latencies: number[] = [];
  const failures: string[] = [];
  let failed = 0;
  const started = performance.now();
  try {
    await Promise.all(
      chats.map(async (chat) => {
        for (let turn = 0; turn < turnsEach; turn++) {
          const sent = performance.now();
          const body = JSON.stringify({ seq: history + 2 * turn, text: `Which tram goes up to Graça? (${turn})` });
          const response = await post(`${origin}/chats/${chat.chatId}/turns`, chat.person, body).catch(
            (error: unknown) => ({ status: 0, body: String(error) }),
          );
          if (response.status !== 200 || !/"type":"turn-end"[^\n]*"status":"done"/.test(response.body)) {
            failed += 1;
            if (failures.length < 3)
              failures.push(`${chat.chatId} turn ${turn}: ${response.status} ${response.body.slice(-300)}`);
            return;
          }
          latencies.push(performance.now() - sent);
          chat.done += 1;
        }
      }),
    );
  } finally {
    await server.close(true);
  }
  const seconds = (performance.now() - started) / 1000;
  let lost = 0;
  for (const chat of chats) {
    const log = await storeOf(chat.person).readChat(chat.chatId, { kept: false });
    lost += Math.max(0, history + 2 * chat.done - log.nextSeq);
  }
  return {
    concurrent,
    people,
    turns: latencies.length + failed,
    failed,
    lost,
    turnsPerSecond: round(latencies.length / seconds, 1),
    p50: round(percentile(latencies, 0.5), 1),
    p95: round(percentile(latencies, 0.95), 1),
    max: round(Math.max(...latencies), 1),
    failures,
  };
}

/** The levels of load: turns kept running at once. */
const loadLevelsAt = [1, 4, 16, 64];

/**
 * Turns under load on PGlite and Postgres (scale-load.ts), each level on new chats of 200 messages (a transcript
 * keeping the last 100, as in the cold turns above). A level sends `total` turns, at least 4 on each chat; a
 * first round of 4 chats warms the process up.
 */
export async function loadLevels(options: {
  readonly pglite: PGlite;
  readonly postgresUrl: string;
  readonly quick: boolean;
  readonly log: (message: string) => void;
  readonly provider: ProviderAdapter;
  readonly seed: (store: ChatStore, chatId: string, length: number) => Promise<void>;
  /** The stores to load; both when absent. */
  readonly only?: readonly string[];
}): Promise<Record<string, LoadFigures[]>> {
  const { pglite, postgresUrl, quick, log, provider, seed } = options;
  const total = quick ? 128 : 384;
  // As `pnpm serve` with DATABASE_URL: a pool of 10, the running turns shared through the database.
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 10 });
  const shared = createPostgresRunningTurns({ db: pool });
  const targets = (
    [
      { name: "PGlite", db: pglite },
      { name: "Postgres", db: pool, runningTurns: shared },
    ] satisfies LoadTarget[]
  ).filter((target) => !options.only || options.only.includes(target.name));
  const run = Date.now().toString(36);
  const figures: Record<string, LoadFigures[]> = {};
  try {
    for (const target of targets) {
      const common = { provider, history: 200, seed };
      await runLoad(target, { ...common, concurrent: 4, turnsEach: 4, tag: `${run}-${target.name}-warm` });
      figures[target.name] = [];
      for (const concurrent of loadLevelsAt) {
        const turnsEach = Math.max(4, Math.ceil(total / concurrent));
        const tag = `${run}-${target.name}-${concurrent}`;
        const at = await runLoad(target, { ...common, concurrent, turnsEach, tag });
        log(`${target.name} at ${concurrent}: ${at.turnsPerSecond} turns/s, p50 ${at.p50} ms, p95 ${at.p95} ms`);
        for (const failure of at.failures) log(`  failed: ${failure}`);
        figures[target.name]!.push(at);
      }
    }
  } finally {
    await shared.close();
    await pool.end();
  }
  return figures;
}

export function loadTable(load: Record<string, LoadFigures[]>): Table {
  return {
    title:
      "Turns under load (POST /chats/{id}/turns over HTTP on 127.0.0.1, a provider that answers at once): turns/s and ms from the POST to turn-end",
    header: ["store", "at once", "people", "turns", "turns/s", "p50", "p95", "p95 / p50", "max", "failed", "lost"],
    rows: Object.entries(load).flatMap(([name, levels]) =>
      levels.map((at) => [
        name,
        String(at.concurrent),
        String(at.people),
        String(at.turns),
        at.turnsPerSecond.toFixed(1),
        at.p50.toFixed(1),
        at.p95.toFixed(1),
        `${round(at.p95 / at.p50, 2)}×`,
        at.max.toFixed(1),
        String(at.failed),
        String(at.lost),
      ]),
    ),
    notes: [
      "Each chat of its own, its turns one after another (the next sent when the last one's stream ended); four chats a person. PGlite with the handler's in-process running turns, Postgres with createPostgresRunningTurns on a pool of 10, as pnpm serve runs each. The client and the server share this process.",
    ],
  };
}
