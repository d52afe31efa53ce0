import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { readEventStream } from "../protocol/event-stream.js";
import type { WireChatPage, WireProblem } from "../protocol/wire.js";
import { bearer, type EngineServer, startEngineServer } from "../server/testing/engine-server.js";
import { createPostgresChatStore } from "./postgres-store.js";
import { createPostgresRunningTurns, type PostgresRunningTurns } from "./running-turns.js";
import { openPostgres, type TestDatabase } from "./testing/databases.js";

// Two engine servers (two instances: each its own pool, engine, fake provider) on one real Postgres, through
// the real handler over HTTP on loopback.
let database: TestDatabase<pg.Pool>;
const pools: pg.Pool[] = [];
const turns: PostgresRunningTurns[] = [];
const servers: EngineServer[] = [];

async function startInstance(options: { chunkDelayMs?: number } = {}): Promise<EngineServer> {
  const pool = new pg.Pool({ connectionString: database.url, max: 6 });
  pools.push(pool);
  const runningTurns = createPostgresRunningTurns({ db: pool, leaseMs: 3000, pollMs: 200 });
  turns.push(runningTurns);
  const holder: { server?: EngineServer } = {};
  const server = await startEngineServer({
    ...options,
    handler: {
      engineFor: (userId, { model }) =>
        (holder.server as EngineServer).makeEngine(createPostgresChatStore({ db: pool, userId }), model),
      runningTurns,
    },
  });
  holder.server = server;
  servers.push(server);
  return server;
}

beforeAll(async () => {
  database = await openPostgres();
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(turns.map((running) => running.close()));
  await Promise.all(pools.map((pool) => pool.end()));
  await database?.close();
});

interface TurnResult {
  readonly seq: number;
  readonly text: string;
  readonly events: EngineEvent[];
  readonly conflicts: number;
}

/** Sends one turn, reading the chat's next seq again after every 409 (stale or busy), as a client does. */
async function sendTurn(server: EngineServer, chatId: string, text: string): Promise<TurnResult> {
  let seq = 0;
  let conflicts = 0;
  for (let attempt = 0; attempt < 400; attempt++) {
    const response = await fetch(`${server.baseURL}/chats/${chatId}/turns`, {
      method: "POST",
      headers: { ...bearer("alice"), "content-type": "application/json" },
      body: JSON.stringify({ seq, text }),
    });
    if (response.status === 409) {
      conflicts++;
      const problem = (await response.json()) as WireProblem;
      if (typeof problem.nextSeq === "number") seq = problem.nextSeq;
      else await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
      continue;
    }
    expect(response.status).toBe(200);
    const events: EngineEvent[] = [];
    for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
      const event = JSON.parse(message.data) as EngineEvent;
      events.push(event);
      if (event.type === "turn-end") break;
    }
    return { seq, text, events, conflicts };
  }
  throw new Error(`turn ${text} never got in`);
}

describe("two engine servers on one Postgres", () => {
  it("should store each of 40 turns sent to one chat from both at once exactly once, with contiguous seqs", async () => {
    const [a, b] = [await startInstance(), await startInstance()];
    const shared = Array.from({ length: 40 }, (_, turn) => sendTurn(turn % 2 === 0 ? a : b, "shared", `turn ${turn}`));
    // Other chats at the same time on both instances: a lock per chat, never one for all.
    const others = ["x", "y"].flatMap((chatId) =>
      Array.from({ length: 3 }, (_, turn) => sendTurn(turn % 2 === 0 ? a : b, `other-${chatId}`, `${chatId} ${turn}`)),
    );
    const results = await Promise.all([...shared, ...others]);
    expect(results.every((result) => result.events.at(-1)?.type === "turn-end")).toBe(true);

    const store = createPostgresChatStore({ db: database.db, userId: "alice" });
    const log = await store.readLog("shared");
    expect(log.map((message) => message.seq)).toEqual(Array.from({ length: 80 }, (_, seq) => seq));
    const asked = log.filter((message) => message.role === "user");
    const texts = asked.map((message) => (message.parts[0]?.type === "text" ? message.parts[0].text : ""));
    expect(texts.toSorted()).toEqual(Array.from({ length: 40 }, (_, turn) => `turn ${turn}`).toSorted());
    // Every turn's answer follows its own question, at the seq its stream said.
    for (const result of results.slice(0, 40)) {
      const start = result.events.find((event) => event.type === "turn-start");
      const end = result.events.find((event) => event.type === "message-end");
      expect(start?.type === "turn-start" && start.message.seq).toBe(
        end?.type === "message-end" && end.message.seq - 1,
      );
      const seq = start?.type === "turn-start" ? start.message.seq : -1;
      expect(log[seq]?.parts[0]).toEqual({ type: "text", text: result.text });
      expect(log[seq + 1]?.role).toBe("assistant");
    }
    expect(results.reduce((sum, result) => sum + result.conflicts, 0)).toBeGreaterThan(0);
    for (const chatId of ["other-x", "other-y"]) {
      expect((await store.readLog(chatId)).map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    }
  }, 300_000);

  it("should refuse a branch switch on one while a turn runs on the other, then show either the switch the other made", async () => {
    const [a, b] = [await startInstance({ chunkDelayMs: 5 }), await startInstance()];
    const post = (server: EngineServer, path: string, body: unknown) =>
      fetch(`${server.baseURL}/chats/branching${path}`, {
        method: "POST",
        headers: { ...bearer("alice"), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const branchOf = async (server: EngineServer) => {
      const response = await fetch(`${server.baseURL}/chats/branching`, { headers: bearer("alice") });
      const page = (await response.json()) as WireChatPage;
      return page.snapshot.messages.map((message) => message.seq);
    };
    await sendTurn(a, "branching", "one");
    await sendTurn(b, "branching", "two");
    await (await post(a, "/turns", { seq: 4, parent: 1, text: "two, edited" })).text();
    expect(await branchOf(b)).toEqual([0, 1, 4, 5]);

    // An answer of about a second (175 chunks, 5 ms apart): the switch below is asked while it streams.
    a.script.queue.push({ text: Array.from({ length: 400 }, (_, index) => `word${index}`).join(" ") });
    const running = await post(a, "/turns", { seq: 6, text: "three" });
    expect(running.status).toBe(200);
    const busy = await post(b, "/branch", { seq: 2 });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as WireProblem).type).toBe("urn:conch:problem:busy");
    await running.text();

    const switched = await post(b, "/branch", { seq: 2 });
    expect(switched.status).toBe(200);
    expect((await switched.json()) as WireChatPage).toMatchObject({ snapshot: { activeLeaf: 3, nextSeq: 8 } });
    expect(await branchOf(a)).toEqual([0, 1, 2, 3]);
    const back = await post(a, "/branch", { seq: 6 });
    expect(back.status).toBe(200);
    expect(await branchOf(b)).toEqual([0, 1, 4, 5, 6, 7]);
  }, 120_000);

  it("should give a reconnect to the other instance mid-answer the rest of the turn, no event twice", async () => {
    const [a, b] = [await startInstance({ chunkDelayMs: 5 }), await startInstance()];
    const longReply = Array.from({ length: 60 }, (_, index) => `word${index}`).join(" ");
    a.script.queue.push({ text: longReply });
    const controller = new AbortController();
    const response = await fetch(`${a.baseURL}/chats/resume/turns`, {
      method: "POST",
      headers: { ...bearer("alice"), "content-type": "application/json" },
      body: JSON.stringify({ seq: 0, text: "Tell me" }),
      signal: controller.signal,
    });
    const read = async (body: Response, stopAfter?: number) => {
      const received: { id: string; event: EngineEvent }[] = [];
      for await (const message of readEventStream(body.body as ReadableStream<Uint8Array>)) {
        const event = JSON.parse(message.data) as EngineEvent;
        received.push({ id: message.id as string, event });
        if (event.type === "turn-end") break;
        if (stopAfter !== undefined && received.length >= stopAfter) {
          controller.abort();
          break;
        }
      }
      return received;
    };
    const before = await read(response, 6);
    expect(before.at(-1)?.event.type).not.toBe("turn-end");
    const resumed = await fetch(`${b.baseURL}/chats/resume/events`, {
      headers: { ...bearer("alice"), "last-event-id": before.at(-1)?.id as string },
    });
    expect(resumed.status).toBe(200);
    const rest = await read(resumed);
    const all = [...before, ...rest];
    const ids = all.map(({ id }) => id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map(BigInt)).toEqual(ids.map(BigInt).toSorted((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    const text = all.map(({ event }) => (event.type === "text-delta" ? event.delta : "")).join("");
    expect(text).toBe(longReply);
    expect(all.at(-1)?.event).toMatchObject({ type: "turn-end", status: "done" });
  }, 120_000);
});
