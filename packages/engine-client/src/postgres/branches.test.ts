import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { sampleLog } from "../transcript/testing/fixtures.js";
import { buildTranscriptFile } from "../transcript/transcript-file.js";
import { migrate, schemaVersion } from "./migrate.js";
import { createPostgresChatStore } from "./postgres-store.js";
import type { SqlDatabase } from "./sql.js";
import { freshPerson, openPglite, openPostgres, type TestDatabase } from "./testing/databases.js";

// Branches in the Postgres store, on the embedded database and on the real server: parents in their column, the
// log still one row per seq in seq order, and a chat from before read as one branch.
const backends: [string, (options?: { migrated?: boolean }) => Promise<TestDatabase<SqlDatabase>>][] = [
  ["PGlite", openPglite],
  ["Postgres", openPostgres],
];

const said = (seq: number, role: ChatMessage["role"], text: string, parent?: number): ChatMessage => ({
  seq,
  role,
  parts: [{ type: "text", text }],
  createdAt: 1_733_000_000_000 + seq,
  ...(parent !== undefined ? { parent } : {}),
});

/**
 * Two turns; the second person message edited (4, after 1) and its answer regenerated (6, after 4); the first
 * message edited too (7, no parent) and answered (8).
 */
const branchedLog: readonly ChatMessage[] = [
  said(0, "user", "one"),
  said(1, "assistant", "Answer to one"),
  said(2, "user", "two"),
  said(3, "assistant", "Answer to two"),
  said(4, "user", "two, edited", 1),
  said(5, "assistant", "Answer to two, edited"),
  said(6, "assistant", "Answer to two, edited, again", 4),
  said(7, "user", "one, edited", -1),
  said(8, "assistant", "Answer to one, edited"),
];

for (const [backend, open] of backends) {
  describe(`branches in the Postgres store on ${backend}`, () => {
    let database: TestDatabase<SqlDatabase>;
    beforeAll(async () => {
      database = await open();
    });
    afterAll(async () => {
      await database?.close();
    });

    describe("given a branched log", () => {
      it("should store each fork's parent in its column (null for seq - 1) and read every version in seq order", async () => {
        const userId = freshPerson();
        const store = createPostgresChatStore({ db: database.db, userId });
        await store.appendLog("tree", branchedLog.slice(0, 5));
        await store.appendLog("tree", branchedLog.slice(5));
        const { rows } = await database.db.query(
          "select seq, parent from conch_messages where user_id = $1 and chat_id = 'tree' order by seq",
          [userId],
        );
        expect(rows.map((row) => [row.seq, row.parent])).toEqual([
          [0, null],
          [1, null],
          [2, null],
          [3, null],
          [4, 1],
          [5, null],
          [6, 4],
          [7, -1],
          [8, null],
        ]);
        // What a reader of the rows in seq order (today's) sees: every version, none lost, none moved.
        expect(await store.readLog("tree")).toEqual(branchedLog);
        const stored = await database.db.query(
          "select message from conch_messages where user_id = $1 and chat_id = 'tree' order by seq",
          [userId],
        );
        expect(stored.rows.map((row) => JSON.parse(String(row.message)))).toEqual(branchedLog);
      });

      it("should refuse a parent that is not below the message's seq in the database too", async () => {
        const userId = freshPerson();
        const store = createPostgresChatStore({ db: database.db, userId });
        await store.appendLog("tree", branchedLog.slice(0, 2));
        const refused = await database.db
          .query(
            `insert into conch_messages (user_id, chat_id, seq, role, message, parent)
             values ($1, 'tree', 2, 'user', '{}', 2)`,
            [userId],
          )
          .catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(Error);
      });

      it("should index the parents, for the reads of a message's versions", async () => {
        const { rows } = await database.db.query(
          "select indexdef from pg_indexes where indexname = 'conch_messages_by_parent'",
        );
        expect(String(rows[0]?.indexdef)).toMatch(/\(user_id, chat_id, parent\) WHERE \(parent IS NOT NULL\)/);
      });
    });
  });
}

describe.each(backends)("a chat from before branches on %s", (_backend, open) => {
  it("should be kept whole by the upgrade to branches, each parent the message before it", async () => {
    const { db, close } = await open({ migrated: false });
    try {
      await migrate(db, { upTo: schemaVersion - 1 });
      // The rows as the code before branches wrote them.
      await db.query("insert into conch_chats (user_id, chat_id) values ('local', 'old')");
      const log = sampleLog();
      for (const message of log) {
        await db.query(
          "insert into conch_messages (user_id, chat_id, seq, role, message) values ('local', 'old', $1, $2, $3)",
          [message.seq, message.role, JSON.stringify(message)],
        );
      }
      const file = buildTranscriptFile({ id: "old", kept: log.slice(2) });
      await db.query("insert into conch_transcripts (user_id, chat_id, body, bytes) values ('local', 'old', $1, $2)", [
        JSON.stringify(file),
        JSON.stringify(file).length,
      ]);
      expect(await migrate(db)).toEqual({ from: schemaVersion - 1, to: schemaVersion });
      const store = createPostgresChatStore({ db });
      expect(await store.readLog("old")).toEqual(log);
      const { rows } = await db.query("select count(*)::integer as forks from conch_messages where parent is not null");
      expect(rows[0]?.forks).toBe(0);
      const reading = await store.readChat("old", { page: { limit: 100 } });
      expect(reading.nextSeq).toBe(log.length);
      expect(reading.page).toEqual(log);
    } finally {
      await close();
    }
  });
});
