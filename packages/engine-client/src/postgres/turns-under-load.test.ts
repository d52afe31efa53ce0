import type { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { readEventStream } from "../protocol/event-stream.js";
import { createEngineHandler } from "../server/handler.js";
import type { RunningTurns } from "../server/running-turns.js";
import { bearer, type EngineServer, startEngineServer } from "../server/testing/engine-server.js";
import { fairEmbedded } from "./fair-embedded.js";
import { createPostgresChatStore } from "./postgres-store.js";
import { createPostgresRunningTurns, type PostgresRunningTurns } from "./running-turns.js";
import type { SqlDatabase } from "./sql.js";
import { openPglite, openPostgres, type TestDatabase } from "./testing/databases.js";

/** Runs a turn through the server and reads its stream to its turn-end: the response's status and its events. */
async function sendTurn(
  server: EngineServer,
  chatId: string,
  seq: number,
  text: string,
  person: "alice" | "bob" = "alice",
) {
  const response = await fetch(`${server.baseURL}/chats/${chatId}/turns`, {
    method: "POST",
    headers: { ...bearer(person), "content-type": "application/json" },
    body: JSON.stringify({ seq, text }),
  });
  const events: EngineEvent[] = [];
  if (response.status !== 200) return { status: response.status, events, body: await response.text() };
  for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
    events.push(JSON.parse(message.data) as EngineEvent);
  }
  return { status: response.status, events, body: "" };
}

describe("PGlite's line of statements (fairEmbedded)", () => {
  let database: TestDatabase<PGlite>;
  beforeAll(async () => {
    database = await openPglite({ migrated: false });
  });
  afterAll(async () => {
    await database.close();
  });

  it("should be one line per database, whoever asks for it", () => {
    expect(fairEmbedded(database.db)).toBe(fairEmbedded(database.db));
  });

  it("should run statements in the order asked, letting the event loop in between (a turn arriving takes its place)", async () => {
    const line = fairEmbedded(database.db);
    const finished: number[] = [];
    let finishedWhenTheLoopRan = -1;
    const asked = Array.from({ length: 40 }, (_, index) =>
      line.query("select $1::int as n", [index]).then(({ rows }) => finished.push(Number(rows[0]?.n))),
    );
    // Stands for a socket read: it must not wait for the whole backlog, as it did behind PGlite's own chain.
    setImmediate(() => {
      finishedWhenTheLoopRan = finished.length;
    });
    await Promise.all(asked);
    expect(finished).toEqual(Array.from({ length: 40 }, (_, index) => index));
    expect(finishedWhenTheLoopRan).toBeGreaterThanOrEqual(0);
    expect(finishedWhenTheLoopRan).toBeLessThan(40);
  });

  it("should reject only the statement that failed and go on with the rest", async () => {
    const line = fairEmbedded(database.db);
    const results = await Promise.allSettled([
      line.query("select 1 as n"),
      line.query("select * from no_such_table"),
      line.query("select 3 as n"),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(results[2]?.status === "fulfilled" && results[2].value.rows[0]?.n).toBe(3);
  });

  it("should hold a transaction's place to its end: a statement asked meanwhile sees it committed", async () => {
    const line = fairEmbedded(database.db);
    let entered: () => void = () => undefined;
    let open: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const transaction = line.transaction(async (tx) => {
      await tx.query("create table fair_line (n int)");
      entered();
      await gate;
      await tx.query("insert into fair_line values (1), (2)");
    });
    await inside;
    const counted = line.query("select count(*)::int as n from fair_line");
    open();
    await transaction;
    expect((await counted).rows[0]?.n).toBe(2);
  });
});

const backends: [string, () => Promise<TestDatabase<SqlDatabase>>, boolean][] = [
  ["PGlite, the handler's in-process running turns", openPglite, false],
  ["PGlite, its Postgres running turns", openPglite, true],
  ["Postgres, its Postgres running turns", openPostgres, true],
];

describe.each(backends)("turns through the handler on %s", (_name, open, sharedTurns) => {
  let database: TestDatabase<SqlDatabase>;
  let server: EngineServer;
  let runningTurns: PostgresRunningTurns | undefined;
  beforeAll(async () => {
    database = await open();
    runningTurns = sharedTurns ? createPostgresRunningTurns({ db: database.db, pollMs: 200 }) : undefined;
    const holder: { server?: EngineServer } = {};
    server = await startEngineServer({
      chunkDelayMs: 2,
      handler: {
        engineFor: (userId, { model }) =>
          (holder.server as EngineServer).makeEngine(createPostgresChatStore({ db: database.db, userId }), model),
        ...(runningTurns ? { runningTurns: runningTurns as RunningTurns } : {}),
      },
    });
    holder.server = server;
  });
  afterAll(async () => {
    await server?.close();
    await runningTurns?.close();
    await database?.close();
  });

  it("should take a person's next turn sent the moment the last one's stream ended, never a 409", async () => {
    // The handler called in this process: the next turn reaches it at once, before a release that is a round trip.
    const handler = createEngineHandler({
      engineFor: (userId) => server.makeEngine(createPostgresChatStore({ db: database.db, userId })),
      authorize: () => ({ userId: "alice" }),
      ...(runningTurns ? { runningTurns: runningTurns as RunningTurns } : {}),
    });
    for (let turn = 0; turn < 12; turn++) {
      const response = await handler(
        new Request("http://127.0.0.1/chats/one-after-another/turns", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ seq: 2 * turn, text: `Question ${turn}` }),
        }),
      );
      expect(response.status === 200 ? 200 : await response.text()).toBe(200);
      let end: EngineEvent | undefined;
      for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
        end = JSON.parse(message.data) as EngineEvent;
      }
      expect(end).toMatchObject({ type: "turn-end", status: "done" });
    }
    const store = createPostgresChatStore({ db: database.db, userId: "alice" });
    expect((await store.readLog("one-after-another")).map((message) => message.seq)).toEqual(
      Array.from({ length: 24 }, (_, seq) => seq),
    );
  });

  it("should answer 16 chats' turns sent at once, lose none, and stop the one aborted while the others queue", async () => {
    // Two people, eight chats each (the bound on a person's turns at once), every answer long enough (2 s) to be stopped
    // mid-way whatever the load: the abort itself waits its turn among the statements.
    const chats = Array.from({ length: 16 }, (_, index) => `at-once-${index}`);
    const personOf = (index: number) => (index % 2 === 0 ? "alice" : "bob");
    const aborted = chats[4] as string;
    const longReply = Array.from({ length: 40 }, (_, index) => `word${index}`).join(" ");
    for (const _chat of chats) server.script.queue.push({ text: longReply });
    server.fake.setChunkDelayMs(100);
    const sent = chats.map((chatId, index) => sendTurn(server, chatId, 0, `Hello from ${chatId}`, personOf(index)));
    // As soon as the aborted chat's turn is running (its POST answered), stop it: the others still hold the line.
    let stopped = false;
    for (let attempt = 0; attempt < 500 && !stopped; attempt++) {
      const response = await fetch(`${server.baseURL}/chats/${aborted}/abort`, {
        method: "POST",
        headers: { ...bearer("alice"), "content-type": "application/json" },
        body: "{}",
      });
      stopped = ((await response.json()) as { aborted: boolean }).aborted;
      if (!stopped) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(stopped).toBe(true);
    const results = await Promise.all(sent);
    server.fake.setChunkDelayMs(2);
    for (const [index, chatId] of chats.entries()) {
      const store = createPostgresChatStore({ db: database.db, userId: personOf(index) });
      const result = results[index]!;
      expect(result.status).toBe(200);
      const end = result.events.at(-1);
      if (chatId === aborted) {
        expect(end).toMatchObject({ type: "turn-end", status: "aborted" });
        continue;
      }
      expect(end).toMatchObject({ type: "turn-end", status: "done" });
      const log = await store.readLog(chatId);
      expect(log.map((message) => message.role)).toEqual(["user", "assistant"]);
      expect(log[0]?.parts[0]).toEqual({ type: "text", text: `Hello from ${chatId}` });
    }
    // The aborted chat goes on at its next seq.
    const store = createPostgresChatStore({ db: database.db, userId: "alice" });
    const { nextSeq } = await store.readChat(aborted, { kept: false });
    const next = await sendTurn(server, aborted, nextSeq, "Again");
    expect(next.events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
  });
});
