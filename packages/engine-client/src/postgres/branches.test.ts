import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { branchedLog, withBranches } from "../transcript/testing/branched-chat.js";
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

      it("should read the active branch (the log's last message's, without a record) and any other along its path", async () => {
        const store = createPostgresChatStore({ db: database.db, userId: freshPerson() });
        await store.appendLog("tree", branchedLog);
        const seqsOf = (messages: readonly ChatMessage[]) => messages.map((message) => message.seq);
        const active = await store.readChat("tree", { page: { limit: 100 } });
        expect(active).toMatchObject({ nextSeq: 9, leaf: 8 });
        expect(seqsOf(active.page)).toEqual([7, 8]);
        const edited = await store.readChat("tree", { branch: 4, page: { limit: 100 } });
        expect(edited.leaf).toBe(6);
        expect(seqsOf(edited.page)).toEqual([0, 1, 4, 6]);
        expect(seqsOf((await store.readChat("tree", { branch: 5, page: { limit: 100 } })).page)).toEqual([0, 1, 4, 5]);
        const firstBranch = await store.readChat("tree", { branch: 2, page: { limit: 2 } });
        expect(firstBranch).toMatchObject({ leaf: 3, hasOlder: true });
        expect(seqsOf(firstBranch.page)).toEqual([2, 3]);
        expect(seqsOf(firstBranch.kept)).toEqual([0, 1, 2, 3]);
      });

      it("should copy the transcript's active leaf to its column (null for a chat that never branched)", async () => {
        const userId = freshPerson();
        const store = createPostgresChatStore({ db: database.db, userId });
        await store.appendLog("tree", branchedLog.slice(0, 7));
        const leafColumn = async () =>
          (await database.db.query("select active_leaf from conch_transcripts where user_id = $1", [userId])).rows.map(
            (row) => row.active_leaf,
          );
        await store.writeTranscript("tree", buildTranscriptFile({ id: "tree", kept: branchedLog.slice(0, 2) }));
        expect(await leafColumn()).toEqual([null]);
        await store.writeTranscript("tree", withBranches(buildTranscriptFile({ id: "tree", kept: [] }), 7, 3));
        expect(await leafColumn()).toEqual([3]);
        const reading = await store.readChat("tree", { page: { limit: 10 } });
        expect(reading.leaf).toBe(3);
        expect(reading.page.map((message) => message.seq)).toEqual([0, 1, 2, 3]);
      });
    });

    describe("given an edit cut short by a crash", () => {
      it("should lose nothing: the edit appended without its transcript is the active branch, the old one whole", async () => {
        const userId = freshPerson();
        const store = createPostgresChatStore({ db: database.db, userId });
        await store.appendLog("crash", branchedLog.slice(0, 4));
        await store.writeTranscript("crash", withBranches(buildTranscriptFile({ id: "crash", kept: [] }), 4, 3));
        // The person's edit is appended as a turn begins; the process dies before anything else is written.
        await store.appendLog("crash", [branchedLog[4] as ChatMessage]);
        const restarted = createPostgresChatStore({ db: database.db, userId });
        const active = await restarted.readChat("crash", { page: { limit: 10 } });
        expect(active.leaf).toBe(4);
        expect(active.page).toEqual([branchedLog[0], branchedLog[1], branchedLog[4]]);
        const old = await restarted.readChat("crash", { branch: 2, page: { limit: 10 } });
        expect(old.page).toEqual(branchedLog.slice(0, 4));
        expect(await restarted.readLog("crash")).toEqual(branchedLog.slice(0, 5));
      });

      it("should store an edit's answer and its transcript together or neither, the edit and the old branch kept", async () => {
        const userId = freshPerson();
        const store = createPostgresChatStore({ db: database.db, userId });
        await store.appendLog("refused", branchedLog.slice(0, 5));
        const file = withBranches(buildTranscriptFile({ id: "refused", kept: [] }), 6, 5);
        // The transcript's row refused inside the statement, after the answer's row went in: neither stays.
        await database.db.query(
          "alter table conch_transcripts add constraint conch_test_no_leaf_5 check (active_leaf is distinct from 5)",
        );
        try {
          const failed = await store
            .writeTurn("refused", [branchedLog[5] as ChatMessage], file)
            .catch((error: unknown) => error);
          expect(failed).toBeInstanceOf(Error);
        } finally {
          await database.db.query("alter table conch_transcripts drop constraint conch_test_no_leaf_5");
        }
        expect(await store.readLog("refused")).toEqual(branchedLog.slice(0, 5));
        expect(await store.readTranscript("refused")).toBeNull();
        expect((await store.readChat("refused", { branch: 3, page: { limit: 10 } })).page).toEqual(
          branchedLog.slice(0, 4),
        );
        // Sent again, it is stored whole.
        await store.writeTurn("refused", [branchedLog[5] as ChatMessage], file);
        expect((await store.readChat("refused", { page: { limit: 10 } })).page.map((message) => message.seq)).toEqual([
          0, 1, 4, 5,
        ]);
      });
    });

    describe("given the schema", () => {
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
