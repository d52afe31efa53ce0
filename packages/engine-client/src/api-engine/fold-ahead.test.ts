import type { FakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { nacreChatResponse } from "../ai-sdk/route.js";
import type { EngineEvent } from "../events.js";
import { readEventStream } from "../protocol/event-stream.js";
import type { WireChatPage } from "../protocol/wire.js";
import { createEngineHandler } from "../server/handler.js";
import { createInProcessRunningTurns, type RunningTurns } from "../server/running-turns.js";
import { longTurnText, startHeldSummariser } from "../server/testing/held-summariser.js";
import type { ChatStore } from "../transcript/chat-store.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { type ApiEngineOptions, createApiEngine } from "./api-engine.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The API engine over the fake provider, its summariser held at a gate the test opens, or failing. */
async function setup(
  engineOptions: Partial<ApiEngineOptions> = {},
  store: ChatStore = createMemoryChatStore(),
  local = false,
) {
  const held = await startHeldSummariser();
  servers.push(held.server);
  const provider = held.provider(local);
  const make = (options: Partial<ApiEngineOptions> = engineOptions) =>
    createApiEngine({ provider, model: "chat", store, systemPrompt: "You are a helpful assistant.", ...options });
  const engine = make();
  const heard: EngineEvent[] = [];
  engine.subscribe((event) => heard.push(event));
  return { ...held, engine, make, store, heard };
}

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const typesOf = (events: readonly EngineEvent[]) => events.map((event) => event.type);
const count = (events: readonly EngineEvent[], type: EngineEvent["type"]) =>
  events.filter((event) => event.type === type).length;

/** Two long turns: after the second, the third (a message of the usual size) would have to fold. */
async function twoLongTurns(engine: ReturnType<typeof createApiEngine>, chatId: string) {
  for (const seq of [0, 2]) await collect(engine.sendTurn({ chatId, seq, text: `${seq} ${longTurnText}` }));
}

describe("fold ahead of the need", () => {
  it("should fold after the turn that makes the next one due, in the background, the same turns into the same request", async () => {
    const ahead = await setup();
    const today = await setup({ foldAhead: false });
    await twoLongTurns(ahead.engine, "c");
    await twoLongTurns(today.engine, "c");
    // After the second turn's end, in the background: compacting, then compacted, to listeners.
    await expect.poll(() => count(ahead.heard, "compacted"), { timeout: 10_000 }).toBe(1);
    const types = typesOf(ahead.heard);
    expect(types.lastIndexOf("turn-end")).toBeLessThan(types.indexOf("compacting"));
    expect(count(today.heard, "compacting")).toBe(0);

    const next = await collect(ahead.engine.sendTurn({ chatId: "c", seq: 4, text: `4 ${longTurnText}` }));
    const folding = await collect(today.engine.sendTurn({ chatId: "c", seq: 4, text: `4 ${longTurnText}` }));
    // The turn after waits for no summariser; today's folds first. Its stream says the fold it is the first to use.
    expect(typesOf(next)).not.toContain("compacting");
    expect(typesOf(next).indexOf("compacted")).toBeGreaterThan(typesOf(next).indexOf("turn-start"));
    expect(typesOf(folding)).toContain("compacted");
    const [folded, foldedToday] = [ahead, today].map((side) => side.heard.find((event) => event.type === "compacted"));
    expect(next.find((event) => event.type === "compacted")).toEqual(folded);
    expect(folded?.type === "compacted" && folded.firstKeptSeq).toBe(
      foldedToday?.type === "compacted" ? foldedToday.firstKeptSeq : -1,
    );
    // The same request: the same summary, framed the same, and the same kept turns.
    expect(ahead.answers().at(-1)?.body).toEqual(today.answers().at(-1)?.body);
    expect((await ahead.engine.loadChat("c")).summary?.text).toBe((await today.engine.loadChat("c")).summary?.text);
  });

  it("should have a turn that must fold wait for the running fold and use it (one fold), hearing it in its stream", async () => {
    const { engine, heard, state, closeGate, openGate } = await setup();
    closeGate();
    await twoLongTurns(engine, "c");
    await expect.poll(() => state.summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    const asked = state.summaries;
    const turn = engine.sendTurn({ chatId: "c", seq: 4, text: `4 ${longTurnText}` });
    const events = collect(turn);
    await expect.poll(() => count(heard, "compacting"), { timeout: 10_000 }).toBeGreaterThan(1);
    openGate();
    const streamed = await events;
    const types = typesOf(streamed);
    expect(types.indexOf("compacting")).toBeGreaterThan(types.indexOf("turn-start"));
    expect(types.indexOf("compacted")).toBeGreaterThan(types.indexOf("compacting"));
    expect(types.indexOf("message-start")).toBeGreaterThan(types.indexOf("compacted"));
    expect(count(heard, "compacted")).toBe(1);
    // Its summary is the one fold's: the summariser read the folded turns once.
    expect(state.summaries).toBe(asked);
    const end = streamed.at(-1);
    expect(end?.type === "turn-end" && end.usage.inputTokens).toBeGreaterThan(0);
  });

  it("should not make a turn that fits without the fold wait for it; the fold lands after it", async () => {
    const { engine, heard, state, closeGate, openGate } = await setup();
    closeGate();
    await twoLongTurns(engine, "c");
    await expect.poll(() => state.summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    const short = await collect(engine.sendTurn({ chatId: "c", seq: 4, text: "Thanks!" }));
    expect(short.at(-1)?.type === "turn-end" && short.at(-1)).toMatchObject({ status: "done" });
    expect(typesOf(short)).not.toContain("compacted");
    // Its stream heard that a fold runs.
    expect(typesOf(short)).toContain("compacting");
    openGate();
    await expect.poll(() => count(heard, "compacted"), { timeout: 10_000 }).toBe(1);
    const chat = await engine.loadChat("c");
    expect(chat.summary?.firstKeptSeq).toBeGreaterThan(0);
    expect(chat.messages).toHaveLength(6);
  });

  it("should stop it for a turn that fits without it on this computer (one server), and begin it again after", async () => {
    const { engine, heard, state, closeGate, openGate } = await setup({}, createMemoryChatStore(), true);
    closeGate();
    await twoLongTurns(engine, "c");
    await expect.poll(() => state.summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    const short = await collect(engine.sendTurn({ chatId: "c", seq: 4, text: "Thanks!" }));
    expect(short.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    // The answer did not queue behind the summariser: the fold ahead gave way, changing nothing.
    expect(typesOf(short)).not.toContain("compacting");
    expect(heard.find((event) => event.type === "compaction-skipped")).toMatchObject({ why: "aborted" });
    expect((await engine.loadChat("c")).summary).toBeNull();
    // Begun again after the turn, it lands.
    await expect.poll(() => count(heard, "compacting"), { timeout: 10_000 }).toBeGreaterThan(1);
    openGate();
    await expect.poll(() => count(heard, "compacted"), { timeout: 10_000 }).toBe(1);
    expect((await engine.loadChat("c")).summary?.firstKeptSeq).toBeGreaterThan(0);
  });

  it("should change nothing when the fold ahead fails or runs out of time: the next turn folds as today", async () => {
    for (const failure of ["no summary", "time limit"] as const) {
      const { engine, heard, state, closeGate, openGate } = await setup(
        failure === "time limit" ? { foldTimeLimitMs: 300 } : {},
      );
      if (failure === "time limit") closeGate();
      else state.failSummaries = true;
      await twoLongTurns(engine, "c");
      await expect.poll(() => count(heard, "compaction-skipped"), { timeout: 10_000 }).toBe(1);
      expect(heard.find((event) => event.type === "compaction-skipped")).toMatchObject({ why: "no-summary" });
      const chat = await engine.loadChat("c");
      expect(chat.summary).toBeNull();
      expect(chat.healthNotes).toEqual([]);
      state.failSummaries = false;
      openGate();
      const next = await collect(engine.sendTurn({ chatId: "c", seq: 4, text: `4 ${longTurnText}` }));
      expect(typesOf(next)).toContain("compacted");
      expect((await engine.loadChat("c")).summary?.model).toBe("cheap");
    }
  });

  it("should stop the fold ahead for a fold on request, which folds at once", async () => {
    const { engine, heard, state, closeGate, openGate } = await setup();
    closeGate();
    await twoLongTurns(engine, "c");
    await expect.poll(() => state.summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    const compacting = engine.capabilities.context.compact("c");
    await expect.poll(() => count(heard, "compaction-skipped"), { timeout: 10_000 }).toBe(1);
    expect(heard.find((event) => event.type === "compaction-skipped")).toMatchObject({ why: "aborted" });
    openGate();
    const result = await compacting;
    expect(result.status).toBe("compacted");
    expect(result.status === "compacted" && result.summary.reason).toBe("manual");
    expect(count(heard, "compacted")).toBe(1);
  });

  it("should say in every `compacting` where the fold will cut: a fold in a turn, a fold ahead, a fold on request", async () => {
    /** Every `compacting` of the fold names the `firstKeptSeq` its `compacted` then has; returns that seq. */
    const cutSaid = (events: readonly EngineEvent[]) => {
      const compacting = events.filter((event) => event.type === "compacting");
      const compacted = events.find((event) => event.type === "compacted");
      expect(compacting.length).toBeGreaterThan(1);
      expect(compacted?.type === "compacted" && compacted.firstKeptSeq).toBeGreaterThan(0);
      const cut = compacted?.type === "compacted" ? compacted.firstKeptSeq : -1;
      expect(compacting.map((event) => event.type === "compacting" && event.firstKeptSeq)).toEqual(
        compacting.map(() => cut),
      );
      return cut;
    };

    const inTurn = await setup({ foldAhead: false });
    await twoLongTurns(inTurn.engine, "c");
    const folding = await collect(inTurn.engine.sendTurn({ chatId: "c", seq: 4, text: `4 ${longTurnText}` }));
    expect(cutSaid(folding)).toBe(4);

    const ahead = await setup();
    await twoLongTurns(ahead.engine, "c");
    await expect.poll(() => count(ahead.heard, "compacted"), { timeout: 10_000 }).toBe(1);
    expect(cutSaid(ahead.heard)).toBe(4);

    const onRequest = await setup({ foldAhead: false });
    await twoLongTurns(onRequest.engine, "c");
    expect((await onRequest.engine.capabilities.context.compact("c")).status).toBe("compacted");
    expect(cutSaid(onRequest.heard)).toBe(2);
  });

  it("should drop a fold ahead whose chat another engine over the same store went on with meanwhile", async () => {
    const { engine, make, heard, state, store, closeGate, openGate } = await setup();
    closeGate();
    await twoLongTurns(engine, "c");
    await expect.poll(() => state.summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    const other = make({ foldAhead: false });
    const turn = await collect(other.sendTurn({ chatId: "c", seq: 4, text: "Thanks!" }));
    expect(turn.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    openGate();
    await expect.poll(() => count(heard, "compaction-skipped"), { timeout: 10_000 }).toBe(1);
    expect(count(heard, "compacted")).toBe(0);
    const stored = await store.readChat("c", { kept: false });
    expect(stored.nextSeq).toBe(6);
    expect(stored.transcript?.summary ?? null).toBeNull();
  });
});

/**
 * In-process running turns that, once `hold` is called and until `open`, neither give a lease up nor hand a
 * `turn-end` to a follower: as a Postgres round trip or a notification on its way would.
 */
function slowRunningTurns() {
  const inner = createInProcessRunningTurns();
  let held: Promise<void> | null = null;
  let open: () => void = () => undefined;
  const recorded: EngineEvent["type"][] = [];
  const runningTurns: RunningTurns = {
    tryAcquire: async (key, purpose) => {
      const lease = await inner.tryAcquire(key, purpose);
      if (!lease) return null;
      return {
        purpose: lease.purpose,
        startCursor: lease.startCursor,
        abortSignal: lease.abortSignal,
        record: (event) => {
          recorded.push(event.type);
          return lease.record(event);
        },
        release: async () => {
          await held;
          return lease.release();
        },
      };
    },
    acquire: (key, purpose, signal) => inner.acquire(key, purpose, signal),
    activity: (key) => inner.activity(key),
    follow: async function* (key, after, signal) {
      for await (const numbered of inner.follow(key, after, signal)) {
        if (numbered.event.type === "turn-end") await held;
        yield numbered;
      }
    },
    requestAbort: (key) => inner.requestAbort(key),
    settled: (key, signal) => inner.settled(key, signal),
    forget: (key) => inner.forget(key),
  };
  return {
    runningTurns,
    /** How many turns' `turn-end` the engine has recorded. */
    turnsEnded: () => recorded.filter((type) => type === "turn-end").length,
    hold: () => {
      held = new Promise((resolve) => {
        open = resolve;
      });
    },
    open: () => open(),
  };
}

/**
 * With the running turns held as a turn ends: once its `turn-end` is recorded (not yet out), and a macrotask later
 * than any the engine set when the turn ended, no fold ahead has begun; let out, the reader (`foldBegunAtTheEnd`:
 * whether one had begun when it read the `turn-end`) saw none, and the fold comes after.
 */
async function expectTheFoldAfterTheEnd(
  running: ReturnType<typeof slowRunningTurns>,
  served: readonly EngineEvent[],
  summaries: () => number,
  foldBegunAtTheEnd: Promise<boolean | null>,
) {
  await expect.poll(running.turnsEnded).toBe(2);
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(count(served, "compacting")).toBe(0);
  expect(summaries()).toBe(0);
  running.open();
  expect(await foldBegunAtTheEnd).toBe(false);
  await expect.poll(() => count(served, "compacted"), { timeout: 10_000 }).toBe(1);
}

describe("fold ahead of the need, over the server (a new engine per request)", () => {
  async function serve(runningTurns?: RunningTurns) {
    const setupped = await setup();
    /** What the handler's engines tell their listeners. */
    const served: EngineEvent[] = [];
    const handler = createEngineHandler({
      engineFor: () => {
        const engine = setupped.make();
        engine.subscribe((event) => served.push(event));
        return engine;
      },
      authorize: () => ({ userId: "p" }),
      ...(runningTurns ? { runningTurns } : {}),
    });
    const call = (path: string, init: RequestInit = {}) => handler(new Request(`http://127.0.0.1${path}`, init));
    const post = (path: string, body: unknown) =>
      call(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    /** Reads an event stream to its end, or until `until` says so: the events with their ids. */
    async function read(response: Response, until: (event: EngineEvent) => boolean = () => false) {
      const read: { id: string; event: EngineEvent }[] = [];
      for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
        const event = JSON.parse(message.data) as EngineEvent;
        read.push({ id: message.id ?? "", event });
        if (until(event)) break;
      }
      return read;
    }
    async function longTurn(seq: number) {
      const response = await post("/chats/c/turns", { seq, text: `${seq} ${longTurnText}` });
      expect(response.status).toBe(200);
      return read(response);
    }
    return { ...setupped, served, call, post, read, longTurn };
  }

  it("should hold the chat's lease for it, its events on GET /events, and take a turn at once, which uses it", async () => {
    const { state, closeGate, openGate, call, read, longTurn } = await serve();
    closeGate();
    await longTurn(0);
    const second = await longTurn(2);
    await expect.poll(() => state.summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    const asked = state.summaries;
    const following = new AbortController();
    const events = call(`/chats/c/events?after=${second.at(-1)?.id}`, { signal: following.signal }).then((response) =>
      read(response, (event) => event.type === "turn-end"),
    );
    // The next turn is taken (no 409), by the engine that folds, and waits for the fold: it must fold to fit.
    const next = longTurn(4);
    openGate();
    const types = (await next).map(({ event }) => event.type);
    expect(types.indexOf("compacted")).toBeGreaterThan(types.indexOf("turn-start"));
    expect(types.indexOf("message-start")).toBeGreaterThan(types.indexOf("compacted"));
    expect(state.summaries).toBe(asked);
    const followed = (await events).map(({ event }) => event.type);
    following.abort();
    // The fold's start, recorded under its lease before the turn, then the turn's events.
    expect(followed.indexOf("compacting")).toBeLessThan(followed.indexOf("turn-start"));
    expect(followed).toContain("compacted");
  });

  it("should plan the fold ahead once the turn's turn-end has gone out, however long giving its lease up takes", async () => {
    const releases = slowRunningTurns();
    const { served, state, post, longTurn } = await serve(releases.runningTurns);
    await longTurn(0);
    releases.hold();
    const response = await post("/chats/c/turns", { seq: 2, text: `2 ${longTurnText}` });
    let foldBeganBeforeEnd: boolean | null = null;
    const reading = (async () => {
      for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
        const event = JSON.parse(message.data) as EngineEvent;
        if (event.type === "turn-end") foldBeganBeforeEnd = count(served, "compacting") > 0;
      }
    })();
    await expectTheFoldAfterTheEnd(
      releases,
      served,
      () => state.summaries,
      reading.then(() => foldBeganBeforeEnd),
    );
  });

  it("should stop the fold ahead on POST /abort: nothing changes, and the next turn folds as today", async () => {
    const { state, closeGate, openGate, call, post, longTurn } = await serve();
    closeGate();
    await longTurn(0);
    await longTurn(2);
    await expect.poll(() => state.summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    const stopped = await post("/chats/c/abort", {});
    expect(await stopped.json()).toEqual({ aborted: true });
    openGate();
    const page = (await (await call("/chats/c")).json()) as WireChatPage;
    expect(page.snapshot.summary).toBeNull();
    const next = (await longTurn(4)).map(({ event }) => event.type);
    expect(next).toContain("compacting");
    expect(next).toContain("compacted");
  });
});

describe("fold ahead of the need, through the AI SDK route", () => {
  it("should plan the fold ahead once the turn-end is on its way to the page, however the running turns deliver it", async () => {
    const { make, state } = await setup();
    const engine = make();
    const served: EngineEvent[] = [];
    engine.subscribe((event) => served.push(event));
    const running = slowRunningTurns();
    const turns = { runningTurns: running.runningTurns, userId: "p" };
    const send = (seq: number) =>
      nacreChatResponse({
        engine,
        chatId: "c",
        seq,
        message: { id: `m${seq}`, role: "user", parts: [{ type: "text", text: `${seq} ${longTurnText}` }] },
        turns,
      });
    await (await send(0)).text();
    running.hold();
    const response = await send(2);
    expect(response.status).toBe(200);
    let foldBeganBeforeEnd: boolean | null = null;
    const reading = (async () => {
      for await (const chunk of response.body as ReadableStream<Uint8Array>) {
        if (new TextDecoder().decode(chunk).includes('"type":"finish"')) {
          foldBeganBeforeEnd ??= count(served, "compacting") > 0;
        }
      }
    })();
    await expectTheFoldAfterTheEnd(
      running,
      served,
      () => state.summaries,
      reading.then(() => foldBeganBeforeEnd),
    );
  });
});
