import { afterEach, describe, expect, it } from "vitest";
import {
  ChatLogCorruptError,
  ChatStoreReadError,
  ChatStoreWriteError,
  InvalidChatIdError,
  InvalidChatRecordError,
  TranscriptCorruptError,
  TurnSequenceError,
} from "../errors.js";
import { createIndexedDbChatStore, type IndexedDbChatStore } from "./indexeddb-store.js";
import { chatStoreContract } from "./testing/chat-store-contract.js";
import { bigTranscript, sampleLog, sampleSummary } from "./testing/fixtures.js";
import { buildTranscriptFile, keptSeqs, type TranscriptFile } from "./transcript-file.js";

// Runs in real Chromium (Vitest browser mode) against its own IndexedDB; no fake.
const opened: IndexedDbChatStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) {
    store.close();
    await settle(indexedDB.deleteDatabase(store.databaseName));
  }
});

function createStore(databaseName = `conch-test-${crypto.randomUUID()}`): IndexedDbChatStore {
  const store = createIndexedDbChatStore({ databaseName });
  opened.push(store);
  return store;
}

function settle<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Opens the store's database directly, as another program (or an older version) would. */
async function rawDatabase(store: IndexedDbChatStore): Promise<IDBDatabase> {
  await store.readLog("warm-up");
  return settle(indexedDB.open(store.databaseName));
}

async function rawPut(store: IndexedDbChatStore, objectStore: string, key: IDBValidKey, value: unknown): Promise<void> {
  const db = await rawDatabase(store);
  await settle(db.transaction(objectStore, "readwrite").objectStore(objectStore).put(value, key));
  db.close();
}

async function rawGet(store: IndexedDbChatStore, objectStore: string, key: IDBValidKey): Promise<unknown> {
  const db = await rawDatabase(store);
  const value = await settle(db.transaction(objectStore, "readonly").objectStore(objectStore).get(key));
  db.close();
  return value;
}

// The shared store contract; a second store on the same database is a second tab.
let lastDatabase = "";
chatStoreContract(
  "IndexedDB",
  async () => {
    const store = createStore();
    lastDatabase = store.databaseName;
    return store;
  },
  { second: async () => createStore(lastDatabase) },
);

describe("createIndexedDbChatStore", () => {
  describe("given a database written at version 1 (before the chat list)", () => {
    it("should list its chats after the upgrade, titled by their first words, newest last message first", async () => {
      const databaseName = `conch-test-${crypto.randomUUID()}`;
      const request = indexedDB.open(databaseName, 1);
      request.onupgradeneeded = () => {
        const db = request.result;
        db.createObjectStore("log");
        db.createObjectStore("transcripts");
        db.createObjectStore("corrupt", { autoIncrement: true });
      };
      const old = await settle(request);
      const log = old.transaction("log", "readwrite").objectStore("log");
      const said = (seq: number, text: string, createdAt: number) => ({
        seq,
        role: "user",
        parts: [{ type: "text", text }],
        createdAt,
      });
      log.put(said(0, "An older chat", 1_000), ["older", 0]);
      log.put(said(0, "A newer chat\nsecond line", 2_000), ["newer", 0]);
      await settle(log.put(said(1, "more", 3_000), ["newer", 1]));
      old.close();

      const store = createStore(databaseName);
      expect(await store.directory.list({ offset: 0, limit: 10 })).toEqual({
        chats: [
          { id: "newer", title: "A newer chat", updated: 3_000 },
          { id: "older", title: "An older chat", updated: 1_000 },
        ],
        total: 2,
      });
      expect(await store.readLog("newer")).toHaveLength(2);
      await store.appendLog("newer", [{ ...sampleLog()[1]!, seq: 2 }]);
      expect((await store.directory.list({ offset: 0, limit: 1 })).chats[0]?.title).toBe("A newer chat");
    });
  });

  describe("given a chat never written", () => {
    it("should read an empty log, no transcript and 0 bytes", async () => {
      const store = createStore();
      expect(await store.readLog("new")).toEqual([]);
      expect(await store.readTranscript("new")).toBeNull();
      expect(await store.transcriptBytes("new")).toBe(0);
    });
  });

  describe("given a log appended in two batches and a transcript with later fields", () => {
    it("should read both back as written, thinking signatures untouched", async () => {
      const store = createStore();
      const log = sampleLog();
      await store.appendLog("trip", log.slice(0, 2));
      await store.appendLog("trip", log.slice(2));
      const file: TranscriptFile = {
        ...buildTranscriptFile({ id: "trip", kept: log.slice(3), summary: sampleSummary(3), factor: 1.2 }),
        readUntil: 2,
      };
      await store.writeTranscript("trip", file);

      const reopened = createStore(store.databaseName);
      expect(await reopened.readLog("trip")).toEqual(log);
      expect((await reopened.readLog("trip"))[1]?.parts[0]).toMatchObject({
        signature: "EqQBCkYIBRgCKkDx+/=\u0000sig",
      });
      expect(await reopened.readTranscript("trip")).toEqual(file);
    });
  });

  describe("given messages whose seq does not follow the log", () => {
    it("should refuse the whole batch with TurnSequenceError", async () => {
      const store = createStore();
      const log = sampleLog();
      await store.appendLog("seq", log.slice(0, 2));
      for (const batch of [log.slice(3), log.slice(1, 3), [log[2]!, log[4]!]]) {
        const error = await store.appendLog("seq", batch).catch((caught: unknown) => caught);
        expect(TurnSequenceError.isInstance(error)).toBe(true);
      }
      expect(await store.readLog("seq")).toEqual(log.slice(0, 2));
    });
  });

  describe("given two stores on one database (two tabs) appending the same seq at once", () => {
    it("should let one append it and refuse the other", async () => {
      const first = createStore();
      const second = createStore(first.databaseName);
      const [message] = sampleLog();
      const results = await Promise.allSettled([
        first.appendLog("tabs", [message!]),
        second.appendLog("tabs", [message!]),
      ]);
      expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
      const refused = results.find((result) => result.status === "rejected");
      expect(TurnSequenceError.isInstance(refused?.status === "rejected" ? refused.reason : null)).toBe(true);
      expect(await first.readLog("tabs")).toEqual([message]);
    });
  });

  describe("given unsafe chat ids or records of the wrong shape", () => {
    it("should refuse them with typed errors before touching the database", async () => {
      const store = createStore();
      for (const chatId of ["../x", "a/b", "a\u0000b", "..", ""]) {
        const calls = [
          store.readLog(chatId),
          store.appendLog(chatId, sampleLog()),
          store.readTranscript(chatId),
          store.writeTranscript(chatId, buildTranscriptFile({ id: chatId, kept: [] })),
          store.transcriptBytes(chatId),
        ];
        for (const call of calls) {
          expect(InvalidChatIdError.isInstance(await call.catch((caught: unknown) => caught))).toBe(true);
        }
      }
      const wrong = buildTranscriptFile({ id: "c", kept: sampleLog() });
      const error = await store.writeTranscript("c", { ...wrong, seqs: [0] }).catch((caught: unknown) => caught);
      expect(InvalidChatRecordError.isInstance(error)).toBe(true);
    });
  });

  describe("given a version-1 transcript written before summary, seqs and factor existed", () => {
    it("should read it as before, with its kept messages at the end of the log", async () => {
      const store = createStore();
      await store.appendLog("old", sampleLog());
      const legacy = {
        version: 1,
        id: "old",
        model: "gpt-4o",
        messages: [{ role: "assistant", parts: [{ type: "text", text: "That is tram 28." }] }],
      };
      await rawPut(store, "transcripts", "old", JSON.stringify(legacy));
      const file = await store.readTranscript("old");
      expect(file).toEqual(legacy);
      expect(keptSeqs(file!, 5)).toEqual([4]);
    });
  });

  describe("given a transcript rewritten by a version-1 writer that drops the fields it does not know", () => {
    it("should stay readable with the same messages at the same places; only the summary and factor are gone", async () => {
      const store = createStore();
      const log = sampleLog();
      await store.appendLog("rollback", log);
      const file = buildTranscriptFile({ id: "rollback", kept: log.slice(2), summary: sampleSummary(2), factor: 2 });
      await store.writeTranscript("rollback", file);
      const stored = JSON.parse(String(await rawGet(store, "transcripts", "rollback")));
      const { version, id, model, updatedAt, messages } = stored;
      await rawPut(store, "transcripts", "rollback", JSON.stringify({ version, id, model, updatedAt, messages }));

      const reread = await store.readTranscript("rollback");
      expect(reread?.messages).toEqual(file.messages);
      expect(keptSeqs(reread!, log.length)).toEqual(file.seqs);
      expect(reread?.summary).toBeUndefined();
    });
  });

  describe.each([
    ["JSON cut short", '{"version":1,"id":"bad","mess', "not JSON"],
    ["a value that is not JSON text", { version: 1, id: "bad", messages: [] }, "not JSON text"],
    ["JSON of the wrong shape", '{"version":1,"id":"bad","messages":[{"role":"user"}]}', "parts"],
  ])("given a stored transcript holding %s", (_case, raw, why) => {
    it("should throw TranscriptCorruptError naming the key, and move the value to the corrupt store", async () => {
      const store = createStore();
      await store.appendLog("bad", sampleLog());
      await rawPut(store, "transcripts", "bad", raw);

      const error = await store.readTranscript("bad").catch((caught: unknown) => caught);
      expect(TranscriptCorruptError.isInstance(error)).toBe(true);
      if (!TranscriptCorruptError.isInstance(error)) return;
      expect(error.location).toBe(`indexeddb://${store.databaseName}/transcripts/bad`);
      expect(error.reason).toContain(why);
      expect(error.keptAt).toBe(`indexeddb://${store.databaseName}/corrupt/1`);
      expect(error.message).toContain(error.keptAt);
      expect(await rawGet(store, "corrupt", 1)).toMatchObject({ chatId: "bad", store: "transcripts", raw });
      expect(await store.readTranscript("bad")).toBeNull();
      expect(await store.readLog("bad")).toEqual(sampleLog());
    });
  });

  describe("given a log record that is not the message at its place", () => {
    it("should throw ChatLogCorruptError at that record and change nothing", async () => {
      const store = createStore();
      await store.appendLog("broken", sampleLog().slice(0, 3));
      await rawPut(store, "log", ["broken", 1], { seq: 1, role: "assistant" });
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await store.readLog("broken").catch((caught: unknown) => caught);
        expect(ChatLogCorruptError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ line: 2, torn: false, repaired: false, keptMessages: 1 });
      }
      expect(await rawGet(store, "log", ["broken", 1])).toEqual({ seq: 1, role: "assistant" });
    });
  });

  describe("given the database upgraded under it by another tab (IndexedDB refusing)", () => {
    it("should throw the store's typed errors, never a raw DOMException, and keep what was stored", async () => {
      const store = createStore();
      const log = sampleLog();
      await store.appendLog("c", log.slice(0, 2));
      // Another tab opens a newer version: this store's connection is closed under it.
      const newer = await settle(indexedDB.open(store.databaseName, 3));

      const attempts: [string, () => Promise<unknown>, "read" | "write"][] = [
        ["appendLog", () => store.appendLog("c", log.slice(2)), "write"],
        ["readLog", () => store.readLog("c"), "read"],
        ["writeTranscript", () => store.writeTranscript("c", buildTranscriptFile({ id: "c", kept: log })), "write"],
        ["readTranscript", () => store.readTranscript("c"), "read"],
        ["transcriptBytes", () => store.transcriptBytes("c"), "read"],
      ];
      for (const [name, attempt, kind] of attempts) {
        const error = await attempt().then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(error, name).not.toBeInstanceOf(DOMException);
        const typed = kind === "read" ? ChatStoreReadError.isInstance(error) : ChatStoreWriteError.isInstance(error);
        expect(typed, `${name}: ${String(error)}`).toBe(true);
        expect((error as { cause?: unknown }).cause, name).toBeInstanceOf(DOMException);
        expect(error, name).toMatchObject({ chatId: "c" });
        if (kind === "write") expect(error, name).toMatchObject({ quotaExceeded: false });
      }

      // Once the other tab is gone and the database is back to what this store opens, it goes on.
      newer.close();
      store.close();
      const raw = await settle(indexedDB.open(store.databaseName, 3));
      const messages = await settle(raw.transaction("log").objectStore("log").getAll());
      raw.close();
      expect(messages).toEqual(log.slice(0, 2));
    });
  });

  describe("given a transcript of more than 8 MB", () => {
    it("should round-trip it and report its size in bytes", async () => {
      const store = createStore();
      const file = bigTranscript("big", "eight", 8);
      await store.writeTranscript("big", file);
      expect(await store.readTranscript("big")).toEqual(file);
      const bytes = await store.transcriptBytes("big");
      expect(bytes).toBeGreaterThan(8 * 1024 * 1024);
      expect(bytes).toBe(new TextEncoder().encode(JSON.stringify(await store.readTranscript("big"))).byteLength);
    });
  });

  describe("given many writes to one chat at once", () => {
    it("should run them one after another in call order", async () => {
      const store = createStore();
      const appends = Array.from({ length: 100 }, (_, seq) =>
        store.appendLog("busy", [{ seq, role: "user", parts: [{ type: "text", text: `message ${seq}` }] }]),
      );
      const files = Array.from({ length: 40 }, (_, round) => ({
        ...buildTranscriptFile({ id: "busy", kept: [] }),
        round,
      }));
      const writes = files.map((file) => store.writeTranscript("busy", file));
      const read = store.readTranscript("busy");
      await Promise.all([...appends, ...writes]);
      expect((await read)?.round).toBe(39);
      expect((await store.readLog("busy")).map((message) => message.seq)).toEqual(
        Array.from({ length: 100 }, (_, seq) => seq),
      );
    });
  });
});
