import {
  type ChatMessage,
  type ChatStore,
  createApiEngine,
  createMemoryChatStore,
  type EngineEvent,
  type ProviderAdapter,
} from "@conch/engine-client";
import { computeBudget, planFold } from "@conch/engine-client/context";
import { createEngineHandler } from "@conch/engine-client/server";
import { inProcessProvider } from "../in-process-provider.js";
import { median } from "../stats.js";
import type { Table } from "../table.js";

// Issue #32, "fold ahead of the need": the first token of the turn after a fold is due, with a summariser of 1 s and
// 3 s a request, folding in the turn (today) and folding ahead (sent after the background fold ended, and sent at
// once), in the engine and over the server.

const window = 128_000;
const paragraph = "The tram climbs from Baixa to Graça, past the cathedral; sit on the right for the view. ";

function messageAt(seq: number): ChatMessage {
  const text = `${seq}: ${paragraph.repeat(seq % 2 === 0 ? 8 : 24)}`;
  return { seq, role: seq % 2 === 0 ? "user" : "assistant", parts: [{ type: "text", text }], createdAt: seq };
}

/** The chat model answers at once; the summariser (`cheap`) takes `summariserMs` a request. */
function provider(summariserMs: number): ProviderAdapter {
  return inProcessProvider({
    window,
    summariserMs,
    answer: (model) =>
      model === "cheap"
        ? ["The person plans a trip to Lisbon and asked about trams."]
        : [paragraph, paragraph.repeat(23)],
  });
}

/** The longest log whose next turn (a message of the usual size) does not fold, the turn after it does. */
function dueLength(): number {
  const budget = computeBudget({ window }).budget;
  const folds = (length: number) =>
    planFold({ messages: Array.from({ length: length + 1 }, (_, seq) => messageAt(seq)), budget }).fold;
  let length = 2;
  while (!folds(length + 2)) length += 2;
  return length;
}

type Mode = "today" | "after" | "at once";

/** Whether a run sends the turn after the fold is due (default true), and the pause before the one before it. */
interface RunOptions {
  readonly withNext?: boolean;
  readonly pauseMs?: number;
}

interface Timed {
  /** The turn with no fold due: ms to its first delta. */
  readonly noFold: number;
  /** From that turn's last delta to its turn-end. */
  readonly previousEnd: number;
  /** The turn after the fold is due: ms from sending to its first delta (with its wait, sent at once). */
  readonly next: number;
  /** How long the background fold took (folding ahead), from the previous turn-end to `compacted`. */
  readonly fold: number;
}

/** A turn: ms to the first delta, and from the last delta to turn-end. */
async function timeTurn(events: AsyncIterable<EngineEvent>): Promise<{ firstDelta: number; tail: number }> {
  const started = performance.now();
  let firstDelta = Number.NaN;
  let lastDelta = 0;
  let tail = Number.NaN;
  for await (const event of events) {
    if (event.type === "text-delta") {
      if (Number.isNaN(firstDelta)) firstDelta = performance.now() - started;
      lastDelta = performance.now();
    }
    if (event.type === "turn-end") {
      if (event.status !== "done") throw new Error(`the turn ended ${event.status}`);
      tail = performance.now() - lastDelta;
    }
  }
  return { firstDelta, tail };
}

/** The two turns in the engine (one engine, as an app holds it). */
async function inEngine(summariserMs: number, mode: Mode, length: number, run: RunOptions = {}): Promise<Timed> {
  const { withNext = true, pauseMs = quietMs } = run;
  const store = createMemoryChatStore();
  await store.appendLog(
    "c",
    Array.from({ length: length - 2 }, (_, seq) => messageAt(seq)),
  );
  const engine = createApiEngine({
    provider: provider(summariserMs),
    model: "chat",
    store,
    foldAhead: mode !== "today",
  });
  // A first turn reads the chat: the two timed turns are warm, as in a chat going on.
  await timeTurn(engine.sendTurn({ chatId: "c", seq: length - 2, text: textOf(length - 2) }));
  await engine.capabilities.context?.foldAheadPlanned?.("c");
  await personsPause(pauseMs);
  const folded = foldEnded(engine.subscribe.bind(engine));
  const previous = await timeTurn(engine.sendTurn({ chatId: "c", seq: length, text: textOf(length) }));
  const ended = performance.now();
  if (mode === "after") await folded.promise;
  const next = withNext
    ? await timeTurn(engine.sendTurn({ chatId: "c", seq: length + 2, text: textOf(length + 2) }))
    : { firstDelta: Number.NaN };
  return {
    noFold: previous.firstDelta,
    previousEnd: previous.tail,
    next: next.firstDelta,
    fold: mode === "today" ? Number.NaN : (await folded.promise) - ended,
  };
}

/** The two turns over the server in the process, a new engine per request (as `pnpm serve` and the examples). */
async function overServer(summariserMs: number, mode: Mode, length: number, run: RunOptions = {}): Promise<Timed> {
  const { withNext = true, pauseMs = quietMs } = run;
  const store: ChatStore = createMemoryChatStore();
  await store.appendLog(
    "c",
    Array.from({ length: length - 2 }, (_, seq) => messageAt(seq)),
  );
  const listeners = new Set<(event: EngineEvent) => void>();
  const handler = createEngineHandler({
    engineFor: () => {
      const engine = createApiEngine({
        provider: provider(summariserMs),
        model: "chat",
        store,
        foldAhead: mode !== "today",
      });
      // The bench hears every engine's background events, to know when the fold ahead ended.
      engine.subscribe((event) => {
        for (const listener of listeners) listener(event);
      });
      return engine;
    },
    authorize: () => ({ userId: "bench" }),
  });
  const folded = foldEnded((listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  });
  const send = (seq: number) =>
    handler(
      new Request("http://127.0.0.1/chats/c/turns", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ seq, text: textOf(seq) }),
      }),
    );
  await timeResponse(send(length - 2));
  // As a page on pnpm serve does after each turn: follow the chat until idle. Until then the handler keeps the turn's
  // engine for the fold ahead it may plan, and a turn sent at once would run on that warm engine; the turn after
  // a fold runs on a new one (as a person's next turn, seconds later, does either way), so both are timed cold.
  await untilIdle(handler);
  await personsPause(pauseMs);
  const previous = await timeResponse(send(length));
  const ended = performance.now();
  if (mode === "after") await folded.promise;
  const next = withNext ? await timeResponse(send(length + 2)) : { firstDelta: Number.NaN };
  return {
    noFold: previous.firstDelta,
    previousEnd: previous.tail,
    next: next.firstDelta,
    fold: mode === "today" ? Number.NaN : (await folded.promise) - ended,
  };
}

/**
 * A person's pause before the turn with no fold due, the baseline. The turn after a fold is sent after the fold
 * (8 s or 24 s with nothing running), as a person's next message comes, seconds after a turn; a turn sent in the
 * same breath as the one before runs on hot caches (measured idle, in the engine: 0.15 against 0.32 ms), and one
 * sent 50 ms after it still on warmer ones than after seconds of quiet (0.75 against 0.88 ms after 2 s, median of
 * 6, the turn after the fold 0.76 ms): the baseline comes after 2 s, so the ratio compares like with like.
 */
const quietMs = 2_000;
const personsPause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads `GET /chats/c/events?until=idle` to its end: the chat is idle (no turn, no fold ahead, none planned). */
async function untilIdle(handler: (request: Request) => Promise<Response>): Promise<void> {
  const response = await handler(new Request("http://127.0.0.1/chats/c/events?until=idle"));
  if (!response.ok) throw new Error(`GET /events?until=idle was refused: ${response.status}`);
  await response.text();
}

/** A turn's event stream over the server: ms to its first delta, and from the last delta to turn-end. */
async function timeResponse(responding: Promise<Response>): Promise<{ firstDelta: number; tail: number }> {
  const started = performance.now();
  const response = await responding;
  if (!response.ok || !response.body) throw new Error(`the turn was refused: ${response.status}`);
  let firstDelta = Number.NaN;
  let lastDelta = 0;
  let tail = Number.NaN;
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    const frames = buffered.split("\n\n");
    buffered = frames.pop() ?? "";
    for (const frame of frames) {
      const data = frame.split("\n").find((line) => line.startsWith("data:"));
      if (!data) continue;
      const event = JSON.parse(data.slice(5)) as EngineEvent;
      if (event.type === "text-delta") {
        if (Number.isNaN(firstDelta)) firstDelta = performance.now() - started;
        lastDelta = performance.now();
      }
      if (event.type === "turn-end") tail = performance.now() - lastDelta;
    }
  }
  return { firstDelta, tail };
}

const textOf = (seq: number) => (messageAt(seq).parts[0] as { text: string }).text;

/** Resolves with the time the first background fold ended (`compacted` or `compaction-skipped`). */
function foldEnded(subscribe: (listener: (event: EngineEvent) => void) => () => void): { promise: Promise<number> } {
  let resolve: (at: number) => void = () => undefined;
  const promise = new Promise<number>((settle) => {
    resolve = settle;
  });
  const stop = subscribe((event) => {
    if (event.type === "compacted" || event.type === "compaction-skipped") {
      resolve(performance.now());
      stop();
    }
  });
  return { promise };
}

/**
 * The turn before a fold is due, without and with fold ahead (the fold ahead is then planned and runs after it):
 * ms from its last delta to its `turn-end`, the median of `rounds` runs of each. The two take turns, each first in
 * every other round: turns timed once the process has spent seconds waiting are slower, and run in blocks after
 * the seconds-long runs, "ahead" came out slower for that alone (idle, over the server, 1 s a summary request:
 * 6.2 against 2.9 ms in blocks; 5.2 against 5.6 ms taking turns). A few ms each, so many rounds: the summariser
 * answers in 1 ms, and each run still waits for its fold ahead to end before the next begins.
 */
async function previousTurnEnds(
  time: typeof inEngine,
  length: number,
  rounds: number,
  log: (message: string) => void,
): Promise<{ today: number; ahead: number }> {
  log(`the previous turn's end, ${rounds} rounds each...`);
  const ends: Record<"today" | "after", number[]> = { today: [], after: [] };
  for (let round = 0; round < rounds; round++) {
    for (const mode of round % 2 === 0 ? (["today", "after"] as const) : (["after", "today"] as const)) {
      // Both after the same short pause: this times the end of the turn, not the start of the next.
      ends[mode].push((await time(1, mode, length, { withNext: false, pauseMs: 50 })).previousEnd);
    }
  }
  return { today: median(ends.today), ahead: median(ends.after) };
}

/** The median of each figure over runs. */
function medianOf(runs: readonly Timed[]): Timed {
  const middle = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1] as number;
  return {
    noFold: middle(runs.map((run) => run.noFold)),
    previousEnd: middle(runs.map((run) => run.previousEnd)),
    next: middle(runs.map((run) => run.next)),
    fold: middle(runs.map((run) => run.fold)),
  };
}

/**
 * The figures of the fold-ahead part of `pnpm bench --only scale`. `rounds` runs of "sent after the fold ended" and of
 * the turn before a fold in the turn (their figures are a few ms: the median of several), one of each fold's wait.
 */
export async function foldAheadFigures(
  log: (message: string) => void,
  rounds: number,
): Promise<{ json: unknown; tables: Table[] }> {
  const length = dueLength();
  const rows: string[][] = [];
  const json: Record<string, Record<string, Record<Mode, Timed>>> = {};
  const turnEnds: Record<string, { today: number; ahead: number }> = {};
  for (const where of ["engine", "server"] as const) {
    json[where] = {};
    const time = where === "engine" ? inEngine : overServer;
    const ends = await previousTurnEnds(time, length, rounds * 6, (message) => log(`fold ahead: ${where}, ${message}`));
    turnEnds[where] = ends;
    for (const summariserMs of [1_000, 3_000]) {
      const runsOf: Record<Mode, Timed[]> = { today: [], after: [], "at once": [] };
      log(`fold ahead: ${where}, summariser ${summariserMs} ms a request, today and after (${rounds} rounds)...`);
      // "After" is timed over `rounds` runs; of "today", only the first run sends the turn that folds in it
      // (seconds). The two take turns, each first in every other round, as in `previousTurnEnds`.
      for (let round = 0; round < rounds; round++) {
        for (const mode of round % 2 === 0 ? (["today", "after"] as const) : (["after", "today"] as const)) {
          runsOf[mode].push(await time(summariserMs, mode, length, { withNext: round === 0 || mode === "after" }));
        }
      }
      log(`fold ahead: ${where}, summariser ${summariserMs} ms a request, at once...`);
      runsOf["at once"].push(await time(summariserMs, "at once", length));
      const first = (mode: Mode) => runsOf[mode][0] as Timed;
      const timed: Record<Mode, Timed> = {
        today: { ...medianOf(runsOf.today), next: first("today").next },
        after: medianOf(runsOf.after),
        "at once": first("at once"),
      };
      (json[where] as Record<string, Record<Mode, Timed>>)[String(summariserMs)] = timed;
      const ms = (value: number) => (Number.isNaN(value) ? "–" : value.toFixed(1));
      // The turn before, with no fold due, is the same in every run: its median over all of them.
      const noFold = medianOf([...runsOf.today, ...runsOf.after, ...runsOf["at once"]]).noFold;
      const times = (value: number) => `${(value / noFold).toFixed(2)}×`;
      rows.push([
        where,
        `${summariserMs / 1000} s`,
        ms(noFold),
        `${ms(timed.today.next)} (${times(timed.today.next)})`,
        `${ms(timed.after.next)} (${times(timed.after.next)})`,
        ms(timed["at once"].next),
        ms(timed.after.fold),
        `${ends.today.toFixed(2)} / ${ends.ahead.toFixed(2)}`,
      ]);
    }
  }
  return {
    json: { length, rounds, previousTurnEnd: turnEnds, ...json },
    tables: [
      {
        title: `Fold ahead of the need (#32): the turn after a fold is due, ${window / 1000}K window, a chat of ${length} messages: ms to its first delta`,
        header: [
          "where",
          "summariser a request",
          "no fold due",
          "today (folds in the turn)",
          "ahead, sent after the fold ended",
          "ahead, sent at once (its wait)",
          "fold ahead took",
          "previous turn-end, today / ahead",
        ],
        rows,
        notes: [
          "The chat model answers at once; × is to the turn before, with no fold due (same chat: warm in the engine; over the server both turns on a new engine, the first sent once the chat was idle, as a page does), sent after 2 s of quiet as the turn after the fold comes after the fold. 'No fold due': the median over every run; 'sent after': over its rounds. 'Sent at once': the next turn goes as the previous turn ends, and waits for the fold (it must fold to fit). 'Previous turn-end': ms from its last delta to its turn-end, the median of its own rounds without and with fold ahead, taking turns, the summariser 1 ms a request (the fold ahead begins after that turn-end, whatever the summariser's time). Over the server, each request gets a new engine (as `pnpm serve`).",
        ],
      },
    ],
  };
}
