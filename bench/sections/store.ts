import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatMessage, ChatStore } from "@conch/engine-client";
import { buildTranscriptFile } from "@conch/engine-client";
import { createFileChatStore } from "@conch/engine-client/node";
import { createPostgresChatStore, migrate } from "@conch/engine-client/postgres";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { startPostgres } from "../../scripts/ensure-postgres.mjs";
import type { BenchSection } from "../section.js";
import { median, round } from "../stats.js";

/** The chat every store is timed on: 2,000 messages, as a long chat has after weeks. */
const chatLength = 2000;
/** How many of them the transcript keeps (what is sent to the model after folds). */
const keptLength = 200;
/** The acceptance bound for loading the chat (its log and transcript) from Postgres. */
const loadBoundMs = 50;

const paragraph =
  "The tram climbs from Baixa to Graça, past the cathedral; sit on the right for the view of the river. ";

function messageAt(seq: number): ChatMessage {
  const text = `${seq}: ${paragraph.repeat(seq % 2 === 0 ? 2 : 6)}`;
  return { seq, role: seq % 2 === 0 ? "user" : "assistant", parts: [{ type: "text", text }], createdAt: seq };
}

/**
 * What a turn writes, as the engine does: the person's message, then the answer with the transcript replaced
 * whole, in one transaction when the store has `writeTurn` (Postgres, PGlite), else as two calls (the file store).
 */
async function appendTurn(store: ChatStore, chatId: string, log: ChatMessage[]): Promise<void> {
  const question = messageAt(log.length);
  await store.appendLog(chatId, [question]);
  log.push(question);
  const answer = messageAt(log.length);
  const file = buildTranscriptFile({ id: chatId, kept: [...log, answer].slice(-keptLength), factor: 1.1 });
  if (store.writeTurn) await store.writeTurn(chatId, [answer], file);
  else {
    await store.appendLog(chatId, [answer]);
    await store.writeTranscript(chatId, file);
  }
  log.push(answer);
}

async function load(store: ChatStore, chatId: string): Promise<void> {
  const [log, file] = await Promise.all([store.readLog(chatId), store.readTranscript(chatId)]);
  if (log.length < chatLength || file === null) throw new Error("the chat did not load whole");
}

interface Timed {
  readonly appendMs: number[];
  readonly loadMs: number[];
}

/**
 * Appending a turn to a 2,000-message chat and loading it, on the file store (the baseline), PGlite persisted in a
 * folder (what `pnpm serve` uses without DATABASE_URL) and a real Postgres (DATABASE_URL, or a throwaway one
 * started as for the tests). Rounds alternate the stores, so a load on the machine falls on all of them alike,
 * and ratios are taken round by round.
 */
export const storeSection: BenchSection = {
  id: "store",
  title: "Chat stores: a turn on a 2,000-message chat",
  async run({ args, log }) {
    const rounds = args.quick ? 3 : 7;
    const turnsPerRound = args.quick ? 5 : 20;
    const folder = await mkdtemp(join(tmpdir(), "conch-bench-store-"));
    log("starting Postgres and PGlite...");
    const server = await startPostgres();
    const pool = new pg.Pool({ connectionString: server.url, max: 4 });
    const pglite = new PGlite(join(folder, "pglite"));
    await pglite.waitReady;
    const stores: [string, ChatStore][] = [
      ["file", createFileChatStore({ root: join(folder, "files") })],
      ["PGlite", createPostgresChatStore({ db: pglite, userId: "bench" })],
      ["Postgres", createPostgresChatStore({ db: pool, userId: "bench" })],
    ];
    try {
      await migrate(pglite);
      await migrate(pool);
      const chatId = `bench-${Date.now()}`;
      const logs = new Map<string, ChatMessage[]>();
      for (const [name, store] of stores) {
        log(`writing the ${chatLength}-message chat to ${name}...`);
        const messages = Array.from({ length: chatLength }, (_, seq) => messageAt(seq));
        for (let start = 0; start < chatLength; start += 200) {
          await store.appendLog(chatId, messages.slice(start, start + 200));
        }
        await store.writeTranscript(chatId, buildTranscriptFile({ id: chatId, kept: messages.slice(-keptLength) }));
        logs.set(name, messages);
      }
      const timed = new Map<string, Timed>(stores.map(([name]) => [name, { appendMs: [], loadMs: [] }]));
      for (let round = 0; round < rounds; round++) {
        for (const [name, store] of stores) {
          const appends: number[] = [];
          for (let turn = 0; turn < turnsPerRound; turn++) {
            const started = performance.now();
            await appendTurn(store, chatId, logs.get(name)!);
            appends.push(performance.now() - started);
          }
          const loads: number[] = [];
          for (let turn = 0; turn < Math.max(3, turnsPerRound / 4); turn++) {
            const started = performance.now();
            await load(store, chatId);
            loads.push(performance.now() - started);
          }
          timed.get(name)!.appendMs.push(median(appends));
          timed.get(name)!.loadMs.push(median(loads));
        }
      }
      const file = timed.get("file")!;
      const ratio = (name: string, field: keyof Timed) =>
        round(median(timed.get(name)![field].map((value, index) => value / file[field][index]!)), 2);
      const ms = (name: string, field: keyof Timed) => round(median(timed.get(name)![field]), 2);
      const postgresLoad = ms("Postgres", "loadMs");
      const json = {
        store: {
          chatLength,
          keptLength,
          rounds,
          turnsPerRound,
          appendTurnMs: Object.fromEntries(stores.map(([name]) => [name, ms(name, "appendMs")])),
          loadMs: Object.fromEntries(stores.map(([name]) => [name, ms(name, "loadMs")])),
          appendTurnRatioToFile: { PGlite: ratio("PGlite", "appendMs"), Postgres: ratio("Postgres", "appendMs") },
          loadRatioToFile: { PGlite: ratio("PGlite", "loadMs"), Postgres: ratio("Postgres", "loadMs") },
          postgresLoadUnderBound: postgresLoad < loadBoundMs,
        },
      };
      return {
        json,
        tables: [
          {
            title: `A turn on a ${chatLength}-message chat (median of ${rounds} rounds of ${turnsPerRound} turns)`,
            header: ["store", "append a turn (ms)", "× file", "load the chat (ms)", "× file"],
            rows: stores.map(([name]) => [
              name,
              ms(name, "appendMs").toFixed(2),
              name === "file" ? "1" : ratio(name, "appendMs").toFixed(2),
              ms(name, "loadMs").toFixed(2),
              name === "file" ? "1" : ratio(name, "loadMs").toFixed(2),
            ]),
            notes: [
              "A turn, as the engine writes it: appendLog (the person's message), then the answer and the transcript " +
                `replaced whole (${keptLength} kept messages): one writeTurn transaction on PGlite and Postgres, ` +
                "appendLog and writeTranscript on the file store. Loading: readLog and readTranscript together.",
              `Loading the chat from Postgres: ${postgresLoad.toFixed(1)} ms, ` +
                `${postgresLoad < loadBoundMs ? "under" : "OVER"} the ${loadBoundMs} ms bound.`,
              `Postgres: ${server.external ? "DATABASE_URL" : "a throwaway local cluster (fsync off, as for the tests)"}; ` +
                "PGlite persisted in a folder; the file store fsyncs every write.",
            ],
          },
        ],
      };
    } finally {
      await pool.end();
      await pglite.close();
      await server.stop();
      await rm(folder, { recursive: true, force: true });
    }
  },
};
