import { apiEngineUnderTest, engineContract } from "@conch/fake-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { messageText } from "../messages.js";
import { createPostgresChatStore } from "./postgres-store.js";
import type { SqlDatabase } from "./sql.js";
import { freshPerson, openPglite, openPostgres, type TestDatabase } from "./testing/databases.js";

// The API engine over the Postgres store, whose writeTurn puts a turn's answer and transcript in one transaction.
const backends: [string, () => Promise<TestDatabase<SqlDatabase>>][] = [
  ["PGlite", openPglite],
  ["Postgres", openPostgres],
];

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch {
    // A turn whose store refused its writes ends its stream with the error; the events before it are what count.
  }
  return events;
}

/**
 * Makes the database refuse any transcript of the people in conch_test_refused: the failure comes inside the
 * turn's transaction, after its messages were inserted. A trigger, so both drivers meet the same real failure.
 */
async function installRefusal(db: SqlDatabase): Promise<void> {
  await db.query("create table conch_test_refused (user_id text primary key)");
  await db.query(
    `create function conch_test_refuse() returns trigger language plpgsql as $$
     begin
       if exists (select 1 from conch_test_refused where user_id = new.user_id) then
         raise exception 'transcript refused by the test';
       end if;
       return new;
     end $$`,
  );
  await db.query(
    `create trigger conch_test_refuse before insert or update on conch_transcripts
     for each row execute function conch_test_refuse()`,
  );
}

for (const [backend, open] of backends) {
  let database: TestDatabase<SqlDatabase>;
  beforeAll(async () => {
    database = await open();
    await installRefusal(database.db);
  });
  afterAll(async () => {
    await database?.close();
  });

  engineContract(`API engine over the Postgres store on ${backend}`, (turns) =>
    apiEngineUnderTest(turns, { store: createPostgresChatStore({ db: database.db, userId: freshPerson() }) }),
  );

  describe(`the API engine over the Postgres store on ${backend}`, () => {
    describe("given turns that answer, fold and fail", () => {
      it("should write the transcript once a turn, with the turn's usage and standing problem in it", async () => {
        const store = createPostgresChatStore({ db: database.db, userId: freshPerson() });
        const writes: string[] = [];
        const counted = {
          ...store,
          readLog: store.readLog,
          readChat: store.readChat,
          appendLog: store.appendLog,
          transcriptBytes: store.transcriptBytes,
          readTranscript: store.readTranscript,
          async writeTranscript(chatId: string, file: Parameters<typeof store.writeTranscript>[1]) {
            writes.push("transcript");
            return store.writeTranscript(chatId, file);
          },
          async writeTurn(...args: Parameters<typeof store.writeTurn>) {
            writes.push("turn");
            return store.writeTurn(...args);
          },
        };
        const under = await apiEngineUnderTest(
          [{ reply: "one" }, { reply: "two" }, { reply: "three", fold: true }, { reply: "", problem: "offline" }],
          { store: counted },
        );
        try {
          const { engine, longText } = under;
          for (const seq of [0, 2, 4]) {
            writes.length = 0;
            const end = await engine.sendTurn({ chatId: "once", seq, text: `${longText} ${seq}` }).done;
            expect(end.status).toBe("done");
            expect(writes).toEqual(["turn"]);
            const file = await store.readTranscript("once");
            expect(file?.usage).toEqual((await under.another().loadChat("once")).usage);
          }
          writes.length = 0;
          const failed = await engine.sendTurn({ chatId: "once", seq: 6, text: "And?" }).done;
          expect(failed.status).toBe("problem");
          expect(writes).toHaveLength(1);
          expect((await under.another().loadChat("once")).problem?.seq).toBe(6);
        } finally {
          await under.close?.();
        }
      });
    });

    describe("given a turn whose transaction fails after its answer was inserted", () => {
      it("should store neither the answer nor the fold's summary, and the chat should go on", async () => {
        const person = freshPerson();
        const store = createPostgresChatStore({ db: database.db, userId: person });
        const under = await apiEngineUnderTest(
          [{ reply: "one" }, { reply: "two" }, { reply: "three", fold: true }, { reply: "three again", fold: true }],
          { store },
        );
        try {
          const { engine, longText } = under;
          for (const seq of [0, 2])
            await collect(engine.sendTurn({ chatId: "whole", seq, text: `${longText} ${seq}` }));
          const before = await store.readTranscript("whole");
          expect(before?.summary).toBeUndefined();

          await database.db.query("insert into conch_test_refused values ($1)", [person]);
          const events = await collect(engine.sendTurn({ chatId: "whole", seq: 4, text: `${longText} 4` }));
          // The fold ran and the answer streamed; only storing them failed.
          expect(events.map((event) => event.type)).toContain("compacted");
          expect(events.map((event) => event.type)).not.toContain("message-end");
          expect((await store.readLog("whole")).map((message) => message.seq)).toEqual([0, 1, 2, 3, 4]);
          expect(await store.readTranscript("whole")).toEqual(before);

          // Another instance over the same database retries the turn: answered, folded, stored whole.
          await database.db.query("delete from conch_test_refused where user_id = $1", [person]);
          const retry = { chatId: "whole", seq: 4, text: "", retry: true };
          const retried = await collect(under.another().sendTurn(retry));
          expect(retried.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
          const log = await store.readLog("whole");
          expect(log.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
          expect(messageText(log[5] as never)).toBe("three again");
          const after = await store.readTranscript("whole");
          expect(after?.summary?.firstKeptSeq).toBeGreaterThan(0);
          expect(after?.seqs?.at(-1)).toBe(5);
        } finally {
          await under.close?.();
        }
      });
    });
  });
}
