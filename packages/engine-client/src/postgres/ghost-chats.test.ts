import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WireCompactResponse } from "../protocol/wire.js";
import { bearer, type EngineServer, startEngineServer } from "../server/testing/engine-server.js";
import { createPostgresChatDirectory } from "./chat-directory.js";
import { createPostgresChatStore } from "./postgres-store.js";
import { createPostgresRunningTurns, type PostgresRunningTurns } from "./running-turns.js";
import type { SqlDatabase } from "./sql.js";
import { openPglite, openPostgres, type TestDatabase } from "./testing/databases.js";

// Issue #28, fault 1 on Postgres: a chat id nobody wrote leaves no row, whatever is asked of it.
const backends: [string, () => Promise<TestDatabase<SqlDatabase>>][] = [
  ["PGlite", openPglite],
  ["Postgres", openPostgres],
];

describe.each(backends)("the server on %s, given chat ids nobody ever wrote", (_backend, open) => {
  let database: TestDatabase<SqlDatabase>;
  let runningTurns: PostgresRunningTurns;
  let server: EngineServer;
  beforeAll(async () => {
    database = await open();
    const db = database.db;
    runningTurns = createPostgresRunningTurns({ db, pollMs: 200 });
    const holder: { server?: EngineServer } = {};
    server = await startEngineServer({
      handler: {
        engineFor: (userId, { model }) =>
          (holder.server as EngineServer).makeEngine(createPostgresChatStore({ db, userId }), model),
        chats: (userId) => createPostgresChatDirectory(createPostgresChatStore({ db, userId })),
        runningTurns,
      },
    });
    holder.server = server;
  });
  afterAll(async () => {
    await server?.close();
    await runningTurns?.close();
    await database?.close();
  });

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${server.baseURL}${path}`, { ...init, headers: { ...bearer("alice"), ...init.headers } });
  const count = async (table: string) =>
    Number((await database.db.query(`select count(*) as n from ${table}`)).rows[0]?.n ?? -1);

  it("should leave no row after a stale-seq turn, a /compact, a branch switch, an abort, usage and events, and answer DELETE with 404", async () => {
    for (const chatId of ["ghost-a", "ghost-b"]) {
      const stale = await call(`/chats/${chatId}/turns`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ seq: 2, text: "not the first" }),
      });
      expect(stale.status).toBe(409);
      const compacted = await call(`/chats/${chatId}/compact`, { method: "POST" });
      expect(((await compacted.json()) as WireCompactResponse).result.status).toBe("nothing-to-fold");
      expect((await call(`/chats/${chatId}/abort`, { method: "POST" })).status).toBe(200);
      expect((await call(`/chats/${chatId}/usage`)).status).toBe(200);
      const switched = await call(`/chats/${chatId}/branch`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ seq: 0 }),
      });
      expect(switched.status).toBe(404);
      expect(((await switched.json()) as { type: string }).type).toBe("urn:conch:problem:not-found");
      const controller = new AbortController();
      const events = await call(`/chats/${chatId}/events`, { signal: controller.signal });
      controller.abort();
      await events.body?.cancel().catch(() => undefined);
      expect((await call(`/chats/${chatId}`, { method: "DELETE" })).status).toBe(404);
    }
    expect(await count("conch_chats")).toBe(0);
    expect(await count("conch_turn_events")).toBe(0);
    expect(await count("conch_leases")).toBe(0);

    // A chat that is written still is, with its events ids going on from where a refused attempt left them.
    const first = await call("/chats/ghost-a/turns", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ seq: 0, text: "hello" }),
    });
    expect(first.status).toBe(200);
    await first.text();
    expect(await count("conch_chats")).toBe(1);
    expect((await call("/chats/ghost-a", { method: "DELETE" })).status).toBe(204);
    expect(await count("conch_chats")).toBe(0);
  });
});
