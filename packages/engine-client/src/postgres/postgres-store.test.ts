import type { PGlite } from "@electric-sql/pglite";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatLogCorruptError, InvalidChatRecordError, TranscriptCorruptError, TurnSequenceError } from "../errors.js";
import type { ChatMessage } from "../messages.js";
import { chatStoreContract } from "../transcript/testing/chat-store-contract.js";
import { sampleLog, sampleSummary } from "../transcript/testing/fixtures.js";
import { buildTranscriptFile } from "../transcript/transcript-file.js";
import { createPostgresChatStore, type PostgresChatStore } from "./postgres-store.js";
import type { SqlDatabase } from "./sql.js";
import { freshPerson, openPglite, openPostgres, type TestDatabase } from "./testing/databases.js";

// The same store on the embedded database and on the real server this run started (scripts/ensure-postgres.mjs).
const backends: [string, () => Promise<TestDatabase<SqlDatabase>>][] = [
  ["PGlite", openPglite],
  ["Postgres", openPostgres],
];

for (const [backend, open] of backends) {
  let database: TestDatabase<SqlDatabase>;
  let lastPerson = "";
  beforeAll(async () => {
    database = await open();
  });
  afterAll(async () => {
    await database?.close();
  });
  const storeFor = (userId: string) => createPostgresChatStore({ db: database.db, userId });

  chatStoreContract(
    backend,
    async () => {
      lastPerson = freshPerson();
      return storeFor(lastPerson);
    },
    // Another store object for the same person on the same database: another instance of the server.
    { second: async () => storeFor(lastPerson) },
  );

  describe(`the Postgres chat store on ${backend}`, () => {
    describe("given two people using the same chat id", () => {
      it("should keep their logs, transcripts and chat lists apart", async () => {
        const alice = storeFor(freshPerson());
        const bob = storeFor(freshPerson());
        const log = sampleLog();
        await alice.appendLog("trip", log);
        await bob.appendLog("trip", log.slice(0, 1));
        await alice.writeTranscript("trip", buildTranscriptFile({ id: "trip", kept: log.slice(2) }));
        expect(await bob.readLog("trip")).toEqual(log.slice(0, 1));
        expect(await bob.readTranscript("trip")).toBeNull();
        expect((await bob.listChats()).map((chat) => chat.chatId)).toEqual(["trip"]);
        await bob.deleteChat("trip");
        expect(await alice.readLog("trip")).toEqual(log);
        expect(await bob.listChats()).toEqual([]);
      });
    });

    describe("given a turn written with writeTurn", () => {
      it("should store its messages and transcript together, or neither when either is refused", async () => {
        const store = storeFor(freshPerson());
        const log = sampleLog();
        await store.appendLog("turn", log.slice(0, 3));
        const file = buildTranscriptFile({ id: "turn", kept: log.slice(3), summary: sampleSummary(3), factor: 1.3 });
        const staleSeq = await store.writeTurn("turn", log.slice(2), file).catch((caught: unknown) => caught);
        expect(TurnSequenceError.isInstance(staleSeq)).toBe(true);
        const badFile = await store
          .writeTurn("turn", log.slice(3), { ...file, seqs: [3] })
          .catch((caught: unknown) => caught);
        expect(InvalidChatRecordError.isInstance(badFile)).toBe(true);
        expect(await store.readLog("turn")).toEqual(log.slice(0, 3));
        expect(await store.readTranscript("turn")).toBeNull();

        await store.writeTurn("turn", log.slice(3), file);
        expect(await store.readLog("turn")).toEqual(log);
        expect(await store.readTranscript("turn")).toEqual(file);
      });
    });

    describe("given two instances appending turns to one chat at once, each retrying on a stale seq", () => {
      it("should store every turn once with contiguous seqs", async () => {
        const person = freshPerson();
        const instances = [storeFor(person), storeFor(person)];
        const sendTurn = async (store: PostgresChatStore, turn: number) => {
          for (;;) {
            const seq = (await store.readLog("shared")).length;
            const messages: ChatMessage[] = [
              { seq, role: "user", parts: [{ type: "text", text: `turn ${turn}` }] },
              { seq: seq + 1, role: "assistant", parts: [{ type: "text", text: `answer ${turn}` }] },
            ];
            try {
              await store.appendLog("shared", messages);
              return;
            } catch (error) {
              if (!TurnSequenceError.isInstance(error)) throw error;
            }
          }
        };
        await Promise.all(Array.from({ length: 40 }, (_, turn) => sendTurn(instances[turn % 2]!, turn)));
        const log = await instances[0]!.readLog("shared");
        expect(log.map((message) => message.seq)).toEqual(Array.from({ length: 80 }, (_, seq) => seq));
        const turns = log.filter((message) => message.role === "user").map((message) => message.parts[0]);
        expect(new Set(turns.map((part) => (part?.type === "text" ? part.text : ""))).size).toBe(40);
        log.forEach((message, index) => {
          if (message.role !== "assistant") return;
          const asked = log[index - 1]?.parts[0];
          const answered = message.parts[0];
          expect(answered?.type === "text" && asked?.type === "text" && answered.text.slice(7)).toBe(
            asked?.type === "text" && asked.text.slice(5),
          );
        });
      });
    });

    describe("given a transcript row edited into something unreadable", () => {
      it("should throw TranscriptCorruptError, keep the text in conch_corrupt, and read no transcript next", async () => {
        const person = freshPerson();
        const store = storeFor(person);
        await store.appendLog("bad", sampleLog());
        await store.writeTranscript("bad", buildTranscriptFile({ id: "bad", kept: sampleLog() }));
        await database.db.query("update conch_transcripts set body = $3 where user_id = $1 and chat_id = $2", [
          person,
          "bad",
          '{"version":1,"id":"bad","mess',
        ]);
        const error = await store.readTranscript("bad").catch((caught: unknown) => caught);
        expect(TranscriptCorruptError.isInstance(error)).toBe(true);
        if (!TranscriptCorruptError.isInstance(error)) return;
        expect(error.keptAt).toMatch(/^postgres:\/\/conch_corrupt\/\d+$/);
        const id = error.keptAt.split("/").at(-1);
        const { rows } = await database.db.query("select raw, chat_id from conch_corrupt where id = $1", [id]);
        expect(rows[0]).toEqual({ raw: '{"version":1,"id":"bad","mess', chat_id: "bad" });
        expect(await store.readTranscript("bad")).toBeNull();
        expect(await store.readLog("bad")).toEqual(sampleLog());
      });
    });

    describe("given a message row edited into something that is not the message at its place", () => {
      it("should throw ChatLogCorruptError at that row on every read and change nothing", async () => {
        const person = freshPerson();
        const store = storeFor(person);
        await store.appendLog("broken", sampleLog());
        await database.db.query(
          "update conch_messages set message = $3 where user_id = $1 and chat_id = $2 and seq = 1",
          [person, "broken", '{"seq":1,"role":"assistant"}'],
        );
        for (let attempt = 0; attempt < 2; attempt++) {
          const error = await store.readLog("broken").catch((caught: unknown) => caught);
          expect(ChatLogCorruptError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({ line: 2, torn: false, repaired: false, keptMessages: 1 });
        }
      });
    });

    describe("given a chat written to", () => {
      it("should list the person's chats most recently changed first, and delete one whole", async () => {
        const store = storeFor(freshPerson());
        // PGlite's clock counts whole milliseconds: two changes in one are equally recent (then listed by chat id).
        const nextMillisecond = () => new Promise((resolve) => setTimeout(resolve, 2));
        for (const chatId of ["first", "second", "third"]) {
          await store.appendLog(chatId, sampleLog().slice(0, 1));
          await nextMillisecond();
        }
        await store.appendLog("first", sampleLog().slice(1, 2));
        expect((await store.listChats()).map((chat) => chat.chatId)).toEqual(["first", "third", "second"]);
        expect((await store.listChats({ limit: 1, offset: 1 })).map((chat) => chat.chatId)).toEqual(["third"]);
        await store.writeTranscript("first", buildTranscriptFile({ id: "first", kept: [] }));
        await store.deleteChat("first");
        expect(await store.readLog("first")).toEqual([]);
        expect(await store.readTranscript("first")).toBeNull();
        expect((await store.listChats()).map((chat) => chat.chatId)).toEqual(["third", "second"]);
      });
    });
  });
}

// Keeps the driver types in use so a change of either library's query shape fails typecheck here.
export type CheckedDrivers = [PGlite, pg.Pool] extends [SqlDatabase, SqlDatabase] ? true : never;
