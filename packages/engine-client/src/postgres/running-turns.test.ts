import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import type { ChatKey, NumberedEvent, RunningTurns } from "../server/running-turns.js";
import { createPostgresRunningTurns, type PostgresRunningTurns } from "./running-turns.js";
import type { SqlDatabase } from "./sql.js";
import { freshPerson, openPglite, openPostgres, type TestDatabase } from "./testing/databases.js";

const delta = (chatId: string, text: string): EngineEvent =>
  ({ type: "text-delta", chatId, seq: 1, text }) as unknown as EngineEvent;

/** Collects what `follow` yields until `count` events came, then stops following. */
async function collect(turns: RunningTurns, key: ChatKey, after: string | null, count: number) {
  const controller = new AbortController();
  const seen: NumberedEvent[] = [];
  for await (const numbered of turns.follow(key, after, controller.signal)) {
    seen.push(numbered);
    if (seen.length === count) controller.abort();
  }
  return seen;
}

const backends: [string, () => Promise<TestDatabase<SqlDatabase>>][] = [
  ["PGlite", openPglite],
  ["Postgres", openPostgres],
];

describe.each(backends)("the Postgres running turns on %s", (backend, open) => {
  let database: TestDatabase<SqlDatabase>;
  const instances: PostgresRunningTurns[] = [];
  const pools: pg.Pool[] = [];
  beforeAll(async () => {
    database = await open();
  });
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    await Promise.all(pools.map((pool) => pool.end()));
    await database.close();
  });
  /** Another server instance: on Postgres its own pool, as another process would have. */
  const instance = (options: { leaseMs?: number } = {}) => {
    let db = database.db;
    if (backend === "Postgres") {
      const pool = new pg.Pool({ connectionString: database.url, max: 4 });
      pools.push(pool);
      db = pool;
    }
    const turns = createPostgresRunningTurns({ db, pollMs: 200, ...options });
    instances.push(turns);
    return turns;
  };
  const key = (chatId = "c"): ChatKey => ({ userId: freshPerson(), chatId });

  describe("given a chat held by one instance", () => {
    it("should refuse it to the other until released, then hand it to the one waiting; other chats stay free", async () => {
      const [a, b] = [instance(), instance()];
      const chat = key();
      const lease = await a.tryAcquire(chat, "turn");
      expect(lease).not.toBeNull();
      expect(await b.tryAcquire(chat, "turn")).toBeNull();
      const other = await b.tryAcquire({ ...chat, chatId: "other" }, "turn");
      expect(other).not.toBeNull();
      await other?.release();
      const waiting = b.acquire(chat, "compact");
      expect((await a.activity(chat)).running).toBe(true);
      await lease?.release();
      const next = await waiting;
      expect(next.purpose).toBe("compact");
      expect((await a.activity(chat)).running).toBe(false);
      await next.release();
      await b.settled(chat);
    });
  });

  describe("given a fold ahead holding the chat on one instance", () => {
    it("should give way to a turn on the other at once, its holder losing the lease; a fold does not take a fold's", async () => {
      const [a, b] = [instance(), instance()];
      const chat = key();
      const folding = (await a.tryAcquire(chat, "fold"))!;
      await folding.record(delta(chat.chatId, "compacting"));
      expect(await b.tryAcquire(chat, "fold")).toBeNull();
      expect((await b.activity(chat)).running).toBe(false);
      const turn = await b.tryAcquire(chat, "turn");
      expect(turn).not.toBeNull();
      expect((await a.activity(chat)).running).toBe(true);
      await expect(folding.record(delta(chat.chatId, "late"))).rejects.toThrow();
      expect(folding.abortSignal.aborted).toBe(true);
      await folding.release();
      expect((await b.activity(chat)).running).toBe(true);
      await turn?.release();
      await b.settled(chat);
    });
  });

  describe("given a turn recording events on one instance", () => {
    it("should give a follower on the other every event once, stored and live, in order, and resume after a cursor", async () => {
      const [a, b] = [instance(), instance()];
      const chat = key();
      const lease = (await a.tryAcquire(chat, "turn"))!;
      const first = await Promise.all(["a", "b", "c"].map((text) => lease.record(delta(chat.chatId, text))));
      const following = collect(b, chat, lease.startCursor, 6);
      const later = [];
      for (const text of ["d", "e"]) later.push(await lease.record(delta(chat.chatId, text)));
      later.push(await lease.record({ type: "turn-end", chatId: chat.chatId, seq: 0, status: "done" } as EngineEvent));
      const seen = await following;
      expect(seen).toEqual([...first, ...later]);
      const ids = seen.map((numbered) => BigInt(numbered.id));
      expect(ids.every((id, index) => index === 0 || id > ids[index - 1]!)).toBe(true);
      expect(await collect(b, chat, seen[2]!.id, 3)).toEqual(seen.slice(3));
      expect((await b.activity(chat)).cursor).toBe(lease.startCursor);
      await lease.release();
      expect((await b.activity(chat)).cursor).toBe(seen.at(-1)!.id);

      // The next turn's ids go on from there, on any instance and after a restart.
      const restarted = instance();
      const second = (await restarted.tryAcquire(chat, "turn"))!;
      expect(second.startCursor).toBe(seen.at(-1)!.id);
      const next = await second.record(delta(chat.chatId, "f"));
      expect(BigInt(next.id)).toBeGreaterThan(ids.at(-1)!);
      expect(await collect(a, chat, null, 1)).toEqual([next]);
      await second.release();
    });
  });

  describe("given an abort requested from the other instance", () => {
    it("should abort the holder's signal", async () => {
      const [a, b] = [instance(), instance()];
      const chat = key();
      const lease = (await a.tryAcquire(chat, "turn"))!;
      expect(await b.requestAbort(chat)).toBe(true);
      await expect.poll(() => lease.abortSignal.aborted, { timeout: 10_000 }).toBe(true);
      await lease.release();
      expect(await b.requestAbort(chat)).toBe(false);
    });
  });

  describe("given a follower still behind its turn when the next turn starts", () => {
    it("should still give it every event of its own turn, then the next turn's", async () => {
      const [a, b] = [instance(), instance()];
      const chat = key();
      const lease = (await a.tryAcquire(chat, "turn"))!;
      const own = [
        await lease.record(delta(chat.chatId, "mine")),
        await lease.record({ type: "turn-end", chatId: chat.chatId, seq: 0, status: "done" } as EngineEvent),
      ];
      await lease.release();
      // The next turn starts, on the other instance, before the first turn's follower has read anything.
      const next = (await b.tryAcquire(chat, "turn"))!;
      const theirs = await next.record(delta(chat.chatId, "theirs"));
      expect(lease.startCursor).toBe("0");
      expect(await collect(a, chat, lease.startCursor, 3)).toEqual([...own, theirs]);
      // A follower from no cursor gets the latest turn only.
      expect(await collect(a, chat, null, 1)).toEqual([theirs]);
      await next.release();
    });
  });

  describe("given an instance that dies holding a chat", () => {
    it("should let another take the chat once the lease expires, and refuse the dead holder's late events", async () => {
      const dying = instance({ leaseMs: 900 });
      const chat = key();
      const lease = (await dying.tryAcquire(chat, "turn"))!;
      await lease.record(delta(chat.chatId, "half"));
      await dying.close(); // its renewals stop, as when the process is killed
      const survivor = instance({ leaseMs: 900 });
      const taken = await survivor.acquire(chat, "turn", AbortSignal.timeout(20_000));
      await expect(lease.record(delta(chat.chatId, "late"))).rejects.toThrow(/lost/);
      expect(lease.abortSignal.aborted).toBe(true);
      const fresh = await taken.record(delta(chat.chatId, "new"));
      // The dead turn's events are gone with it; the new turn's follower sees only its own.
      expect(await collect(survivor, chat, null, 1)).toEqual([fresh]);
      await taken.release();
    });
  });
});
