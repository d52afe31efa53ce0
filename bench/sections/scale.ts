import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildTranscriptFile,
  type ChatMessage,
  type ChatStore,
  createApiEngine,
  createMemoryChatStore,
  createProvider,
  type ProviderAdapter,
} from "@conch/engine-client";
import { createFileChatStore } from "@conch/engine-client/node";
import { createPostgresChatStore, migrate } from "@conch/engine-client/postgres";
import { createEngineHandler } from "@conch/engine-client/server";
import { startFakeProvider } from "@conch/fake-provider";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { startPostgres } from "../../scripts/ensure-postgres.mjs";
import { inProcessProvider } from "../in-process-provider.js";
import type { BenchSection } from "../section.js";
import { median, round } from "../stats.js";
import type { Table } from "../table.js";
import { foldAheadFigures } from "./fold-ahead.js";
import { loadLevels, loadTable } from "./scale-load.js";

const paragraph = "The tram climbs from Baixa to Graça, past the cathedral; sit on the right for the view. ";

function messageAt(seq: number): ChatMessage {
  const text = `${seq}: <b>${paragraph.repeat(seq % 2 === 0 ? 1 : 4)}</b> & more`;
  return { seq, role: seq % 2 === 0 ? "user" : "assistant", parts: [{ type: "text", text }], createdAt: seq };
}

/** A provider in the process that answers at once: only this project's own work is timed. */
function zeroLatencyProvider(window: number): ProviderAdapter {
  return inProcessProvider({ window, answer: answerFor });
}

/** What both providers answer: the summariser's two pieces of summary, or the chat's short answer. */
function answerFor(model: string): readonly [string, string] {
  return model === "cheap"
    ? ["The person plans a trip to Lisbon. ", "They asked about trams."]
    : ["Here it is. ", "Take tram 28."];
}

/**
 * The baseline: the fake provider over HTTP on 127.0.0.1 (no think time), called directly with what a cold turn
 * sends (the kept 100 messages and the person's new one): ms to the first delta and to the stream's end. What
 * the cheapest real provider call costs, so that the engine's own work can be read against it.
 */
async function startHttpBaseline(): Promise<{
  call(): Promise<{ firstDelta: number; end: number }>;
  close(): Promise<void>;
}> {
  const server = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: [
      { id: "chat", window: 128_000 },
      { id: "cheap", window: 128_000 },
    ],
    reply: (request) => ({
      text: answerFor(request.model).join(""),
      usage: { inputTokens: 1_000, outputTokens: 10, cachedInputTokens: 0 },
    }),
  });
  const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
  const messages = [
    ...Array.from({ length: 100 }, (_, index) => messageAt(9_900 + index)),
    { seq: 10_000, role: "user" as const, parts: [{ type: "text" as const, text: "And tomorrow?" }] },
  ];
  return {
    async call() {
      const started = performance.now();
      let firstDelta = Number.NaN;
      for await (const part of provider.streamChat({ model: "chat", system: "You help.", messages })) {
        if (part.type === "text-delta" && Number.isNaN(firstDelta)) firstDelta = performance.now() - started;
      }
      return { firstDelta, end: performance.now() - started };
    },
    close: () => server.close(),
  };
}

/** How the stores are made: `fresh` gives a new store object on the same storage (another instance, a restart). */
interface Backend {
  readonly name: string;
  fresh(): ChatStore;
}

/** A chat of `length` messages as a long chat is after its folds: a transcript keeping its last 100. */
async function writeChat(store: ChatStore, chatId: string, length: number): Promise<void> {
  const messages = Array.from({ length }, (_, seq) => messageAt(seq));
  for (let start = 0; start < length; start += 500) await store.appendLog(chatId, messages.slice(start, start + 500));
  const firstKept = Math.max(0, length - 100);
  const summary = {
    text: "The person plans three days in Lisbon.",
    model: "cheap",
    firstKeptSeq: firstKept,
    reason: "budget" as const,
    before: { messages: length, tokens: 50_000 },
    after: { messages: 100, tokens: 5_000 },
    at: 1,
  };
  await store.writeTranscript(
    chatId,
    buildTranscriptFile({ id: chatId, kept: messages.slice(firstKept), ...(firstKept > 0 ? { summary } : {}) }),
  );
}

/** A cold turn: a new engine and a new store object, no loadChat first; ms to the first delta and to turn-end. */
async function coldTurn(backend: Backend, chatId: string, seq: number): Promise<{ firstDelta: number; end: number }> {
  const engine = createApiEngine({ provider: zeroLatencyProvider(128_000), model: "chat", store: backend.fresh() });
  const started = performance.now();
  let firstDelta = Number.NaN;
  for await (const event of engine.sendTurn({ chatId, seq, text: "And tomorrow?" })) {
    if (event.type === "text-delta" && Number.isNaN(firstDelta)) firstDelta = performance.now() - started;
    if (event.type === "turn-end" && event.status !== "done") throw new Error(`the turn ended ${event.status}`);
  }
  return { firstDelta, end: performance.now() - started };
}

/** A person's page-by-page read over the server (in the process, a new engine per request): ms for the first page and all. */
async function readPages(backend: Backend, chatId: string): Promise<{ first: number; all: number; pages: number }> {
  const store = backend.fresh();
  const handler = createEngineHandler({
    engineFor: () => createApiEngine({ provider: zeroLatencyProvider(128_000), model: "chat", store }),
    authorize: () => ({ userId: "bench" }),
  });
  const started = performance.now();
  let first = 0;
  let pages = 0;
  let before: number | null = null;
  for (;;) {
    const query = before === null ? "?limit=200" : `?before=${before}&limit=200`;
    const response = await handler(new Request(`http://127.0.0.1/chats/${chatId}${query}`));
    const body = (await response.json()) as { snapshot: { messages: ChatMessage[] }; hasOlder: boolean };
    pages += 1;
    if (pages === 1) first = performance.now() - started;
    if (!body.hasOlder) break;
    before = body.snapshot.messages[0]?.seq ?? 0;
  }
  return { first, all: performance.now() - started, pages };
}

/** The process's CPU time so far, ms (every thread: the GC's helpers too). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

/** What the first turn on an imported chat took: wall ms, and the process's CPU ms (what a loaded machine does not stretch). */
interface ImportedTiming {
  readonly compacting: number;
  readonly end: number;
  readonly compactingCpu: number;
  readonly endCpu: number;
}

/** The first turn after a chat arrived whole (imported): engine ms to `compacting` and to turn-end. */
async function importedTurn(window: number, length: number): Promise<ImportedTiming> {
  const store = createMemoryChatStore();
  await store.appendLog(
    "imported",
    Array.from({ length }, (_, seq) => messageAt(seq)),
  );
  const engine = createApiEngine({ provider: zeroLatencyProvider(window), model: "chat", store });
  const started = performance.now();
  const startedCpu = cpuMs();
  let compacting = Number.NaN;
  let compactingCpu = Number.NaN;
  for await (const event of engine.sendTurn({ chatId: "imported", seq: length, text: "Where were we?" })) {
    if (event.type === "compacting" && Number.isNaN(compacting)) {
      compacting = performance.now() - started;
      compactingCpu = cpuMs() - startedCpu;
    }
  }
  return { compacting, end: performance.now() - started, compactingCpu, endCpu: cpuMs() - startedCpu };
}

/** Warm turns on one engine: ms from the answer's last delta to turn-end (storing the answer and the transcript). */
async function warmTurnEnd(backend: Backend, chatId: string, from: number, turns: number): Promise<number> {
  const engine = createApiEngine({ provider: zeroLatencyProvider(128_000), model: "chat", store: backend.fresh() });
  const ends: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    let lastDelta = 0;
    for await (const event of engine.sendTurn({ chatId, seq: from + 2 * turn, text: "Go on" })) {
      if (event.type === "text-delta") lastDelta = performance.now();
      if (event.type === "turn-end") ends.push(performance.now() - lastDelta);
    }
  }
  return median(ends);
}

/**
 * `pnpm bench --only scale` (issue #29): what a turn and a page cost as a chat grows, on every store, with a
 * provider that answers at once so that only the project's own work shows. Ratios are to the 200-message chat
 * of the same store, measured in the same run.
 */
export const scaleSection: BenchSection = {
  id: "scale",
  title: "Scale: a turn costs what the window costs",
  async run({ args, log }) {
    const lengths = [200, 2_000, 10_000];
    const rounds = args.quick ? 3 : 7;
    const foldAhead = await foldAheadFigures(log, args.quick ? 1 : 5);
    const folder = await mkdtemp(join(tmpdir(), "conch-bench-scale-"));
    log("starting Postgres and PGlite...");
    const server = await startPostgres();
    const pool = new pg.Pool({ connectionString: server.url, max: 4 });
    const pglite = new PGlite(join(folder, "pglite"));
    await pglite.waitReady;
    const http = await startHttpBaseline();
    const memory = createMemoryChatStore();
    const person = `bench-${Date.now()}`;
    const backends: Backend[] = [
      { name: "memory", fresh: () => memory },
      { name: "file", fresh: () => createFileChatStore({ root: join(folder, "files") }) },
      { name: "PGlite", fresh: () => createPostgresChatStore({ db: pglite, userId: person }) },
      { name: "Postgres", fresh: () => createPostgresChatStore({ db: pool, userId: person }) },
    ];
    try {
      await migrate(pglite);
      await migrate(pool);
      const cold: Record<string, Record<number, { firstDelta: number; end: number }>> = {};
      const paging: Record<string, Record<number, { first: number; all: number; pages: number }>> = {};
      const warm: Record<string, number> = {};
      log("the baseline: the fake provider over HTTP...");
      const baselineRuns: { firstDelta: number; end: number }[] = [];
      for (let round = 0; round <= rounds * 3; round++) {
        const timed = await http.call();
        if (round > 0) baselineRuns.push(timed);
      }
      const baseline = {
        firstDelta: median(baselineRuns.map((run) => run.firstDelta)),
        end: median(baselineRuns.map((run) => run.end)),
      };
      for (const backend of backends) {
        cold[backend.name] = {};
        paging[backend.name] = {};
        log(`${backend.name}: writing chats of ${lengths.join(", ")} messages...`);
        for (const length of lengths) await writeChat(backend.fresh(), `scale-${length}`, length);
        // Rounds alternate the lengths, so the machine's load falls on all of them alike; the first is a warm-up.
        const firstDeltas = new Map<number, number[]>(lengths.map((length) => [length, []]));
        const ends = new Map<number, number[]>(lengths.map((length) => [length, []]));
        for (let round = 0; round <= rounds; round++) {
          for (const length of lengths) {
            const timed = await coldTurn(backend, `scale-${length}`, length + 2 * round);
            if (round === 0) continue;
            firstDeltas.get(length)!.push(timed.firstDelta);
            ends.get(length)!.push(timed.end);
          }
        }
        for (const length of lengths) {
          cold[backend.name]![length] = {
            firstDelta: median(firstDeltas.get(length)!),
            end: median(ends.get(length)!),
          };
        }
        log(`${backend.name}: pages...`);
        // As the cold turns: rounds alternate the lengths, the first is a warm-up.
        const reads = new Map<number, { first: number; all: number; pages: number }[]>([
          [200, []],
          [10_000, []],
        ]);
        for (let round = 0; round <= Math.max(4, rounds); round++) {
          for (const [length, timed] of reads) {
            const read = await readPages(backend, `scale-${length}`);
            if (round > 0) timed.push(read);
          }
        }
        for (const [length, timed] of reads) {
          paging[backend.name]![length] = {
            first: median(timed.map((read) => read.first)),
            all: median(timed.map((read) => read.all)),
            pages: timed.at(-1)?.pages ?? 0,
          };
        }
        warm[backend.name] = await warmTurnEnd(backend, "scale-2000", 2_000 + 2 * (rounds + 1), rounds * 3);
      }
      log("imported chats...");
      const imported: Record<string, ImportedTiming> = {};
      for (const window of [32_000, 128_000]) {
        const runs: ImportedTiming[] = [];
        for (let round = 0; round < Math.max(2, Math.floor(rounds / 2)); round++)
          runs.push(await importedTurn(window, 10_000));
        imported[window] = {
          compacting: median(runs.map((run) => run.compacting)),
          end: median(runs.map((run) => run.end)),
          compactingCpu: median(runs.map((run) => run.compactingCpu)),
          endCpu: median(runs.map((run) => run.endCpu)),
        };
      }
      log("turns under load...");
      const load = await loadLevels({
        pglite,
        postgresUrl: server.url,
        quick: args.quick,
        log,
        provider: zeroLatencyProvider(128_000),
        seed: writeChat,
      });
      const ms = (value: number) => value.toFixed(1);
      const times = (value: number, base: number) => `${round(value / base, 2)}×`;
      const tables: Table[] = [
        {
          title: "The baseline: the fake provider over HTTP on 127.0.0.1, called directly (no engine, no store): ms",
          header: ["first delta", "end of stream"],
          rows: [[ms(baseline.firstDelta), ms(baseline.end)]],
          notes: [
            "What a cold turn sends (the kept 100 messages and the person's new one), answered at once: the cheapest real provider call.",
          ],
        },
        {
          title: "A cold turn (a new engine and a new store object, no loadChat): ms, and × the 200-message chat",
          header: ["store", ...lengths.flatMap((length) => [`${length}: first delta`, `${length}: turn-end`])],
          rows: backends.map(({ name }) => {
            const base = cold[name]![200]!;
            return [
              name,
              ...lengths.flatMap((length) => {
                const at = cold[name]![length]!;
                return [
                  `${ms(at.firstDelta)} (${times(at.firstDelta, base.firstDelta)})`,
                  `${ms(at.end)} (${times(at.end, base.end)})`,
                ];
              }),
            ];
          }),
          notes: [
            "The chat as it is after its folds: a transcript keeping its last 100 messages. The memory store is one object (it has no storage of its own to open again).",
          ],
        },
        {
          title:
            "The engine's own work against the baseline: a cold turn and the server's first page at 10,000 messages, × the fake provider over HTTP",
          header: ["store", "cold turn: first delta", "cold turn: turn-end", "first page"],
          rows: backends.map(({ name }) => {
            const at = cold[name]![10_000]!;
            return [
              name,
              times(at.firstDelta, baseline.firstDelta),
              times(at.end, baseline.end),
              times(paging[name]![10_000]!.first, baseline.end),
            ];
          }),
          notes: [
            "The cold turn's provider answers in the process at once, so its figures are the engine's and the store's own work; a turn over HTTP adds about the baseline to them.",
          ],
        },
        {
          title: "The server's pages (GET /chats/{id}?before=&limit=200, a new engine per request): ms",
          header: [
            "store",
            "200: first page",
            "200: all",
            "10,000: first page",
            "× 200's",
            "10,000: all (pages)",
            "ms a page",
          ],
          rows: backends.map(({ name }) => {
            const small = paging[name]![200]!;
            const large = paging[name]![10_000]!;
            return [
              name,
              ms(small.first),
              ms(small.all),
              ms(large.first),
              times(large.first, small.first),
              `${ms(large.all)} (${large.pages})`,
              ms(large.all / large.pages),
            ];
          }),
        },
        {
          title:
            "The first turn after importing a 10,000-message chat (memory store, a summariser that answers at once): engine ms",
          header: ["window", "to compacting", "to turn-end", "CPU to compacting", "CPU to turn-end"],
          rows: Object.entries(imported).map(([window, at]) => [
            window,
            ms(at.compacting),
            ms(at.end),
            ms(at.compactingCpu),
            ms(at.endCpu),
          ]),
          notes: [
            "CPU: the process's CPU time (every thread, the GC's too) over the same span: what the engine costs, which a machine shared with other work does not stretch as it stretches the wall clock.",
          ],
        },
        {
          title:
            "A warm turn's end (from the answer's last delta to turn-end, a 2,000-message chat): ms, and × the file store",
          header: ["store", "turn-end", "× file"],
          rows: backends.map(({ name }) => [name, ms(warm[name]!), times(warm[name]!, warm.file!)]),
        },
      ];
      tables.push(loadTable(load), ...foldAhead.tables);
      return {
        json: { scale: { rounds, baseline, cold, paging, imported, warm, load, foldAhead: foldAhead.json } },
        tables,
      };
    } finally {
      await http.close();
      await pool.end();
      await pglite.close();
      await server.stop();
      await rm(folder, { recursive: true, force: true });
    }
  },
};
