import { appendFile, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatImportConflictError, ChatLogCorruptError } from "../errors.js";
import { createFileChatStore } from "../transcript/file-store.node.js";
import { branchedLog, withBranches } from "../transcript/testing/branched-chat.js";
import { sampleLog, sampleSummary } from "../transcript/testing/fixtures.js";
import { buildTranscriptFile } from "../transcript/transcript-file.js";
import { createPostgresChatDirectory } from "./chat-directory.js";
import { importFileChats } from "./import-file-chats.js";
import { createPostgresChatStore } from "./postgres-store.js";
import { freshPerson, openPglite, type TestDatabase } from "./testing/databases.js";

let database: TestDatabase<PGlite>;
let folder: string;
beforeAll(async () => {
  database = await openPglite();
  folder = await mkdtemp(join(tmpdir(), "conch-import-"));
});
afterAll(async () => {
  await database?.close();
  await rm(folder, { recursive: true, force: true });
});

describe("importFileChats", () => {
  it("should copy every chat of a file store whole, keep its last change, and do nothing when run again", async () => {
    const from = createFileChatStore({ root: join(folder, "whole") });
    const log = sampleLog();
    await from.appendLog("trip", log);
    const file = buildTranscriptFile({ id: "trip", kept: log.slice(2), summary: sampleSummary(2), factor: 1.2 });
    await from.writeTranscript("trip", file);
    await from.appendLog("older", log.slice(0, 2));
    const longAgo = new Date("2025-03-01T10:00:00Z");
    await utimes(from.logPath("older"), longAgo, longAgo);
    const into = createPostgresChatStore({ db: database.db, userId: freshPerson() });

    const first = await importFileChats({ from, into });
    expect(first).toEqual({ imported: ["older", "trip"], alreadyThere: [], repaired: [] });
    expect(await into.readLog("trip")).toEqual(log);
    expect(await into.readTranscript("trip")).toEqual(file);
    expect(await into.readLog("older")).toEqual(log.slice(0, 2));
    expect(await into.readTranscript("older")).toBeNull();
    const listed = await createPostgresChatDirectory(into).list({ offset: 0, limit: 10 });
    expect(listed.total).toBe(2);
    expect(listed.chats.map((chat) => chat.id)).toEqual(["trip", "older"]);
    expect(listed.chats[1]?.updated).toBe(longAgo.getTime());

    const again = await importFileChats({ from, into });
    expect(again).toEqual({ imported: [], alreadyThere: ["older", "trip"], repaired: [] });
    expect(await into.readLog("trip")).toEqual(log);
  });

  it("should copy a branched chat whole: every version, each fork's parent, the active leaf", async () => {
    const from = createFileChatStore({ root: join(folder, "branched") });
    await from.appendLog("tree", branchedLog);
    const file = withBranches(buildTranscriptFile({ id: "tree", kept: [] }), branchedLog.length, 3);
    await from.writeTranscript("tree", file);
    const into = createPostgresChatStore({ db: database.db, userId: freshPerson() });
    expect(await importFileChats({ from, into })).toEqual({ imported: ["tree"], alreadyThere: [], repaired: [] });
    expect(await into.readLog("tree")).toEqual(branchedLog);
    expect(await into.readTranscript("tree")).toEqual(file);
    const active = await into.readChat("tree", { page: { limit: 10 } });
    expect(active.page).toEqual(branchedLog.slice(0, 4));
    const { rows } = await database.db.query(
      "select seq, parent from conch_messages where user_id = $1 and parent is not null order by seq",
      [into.userId],
    );
    expect(rows).toEqual([
      { seq: 4, parent: 1 },
      { seq: 6, parent: 4 },
      { seq: 7, parent: -1 },
    ]);
  });

  it("should import a log cut short by a crash as far as its complete lines, the file kept aside", async () => {
    const from = createFileChatStore({ root: join(folder, "torn") });
    const log = sampleLog();
    await from.appendLog("torn", log);
    await appendFile(from.logPath("torn"), '{"seq":');
    const into = createPostgresChatStore({ db: database.db, userId: freshPerson() });
    expect(await importFileChats({ from, into })).toEqual({ imported: ["torn"], alreadyThere: [], repaired: ["torn"] });
    expect(await into.readLog("torn")).toEqual(log);
  });

  it("should stop at a log line that is not a message, the chats before it imported and the file untouched", async () => {
    const from = createFileChatStore({ root: join(folder, "bad") });
    const log = sampleLog();
    await from.appendLog("a-fine", log);
    await from.appendLog("b-bad", log.slice(0, 1));
    await writeFile(from.logPath("b-bad"), "not json\n");
    const into = createPostgresChatStore({ db: database.db, userId: freshPerson() });
    const error = await importFileChats({ from, into }).catch((caught: unknown) => caught);
    expect(ChatLogCorruptError.isInstance(error) && error.repaired).toBe(false);
    expect(await into.readLog("a-fine")).toEqual(log);
    expect(await into.readLog("b-bad")).toEqual([]);
  });

  it("given a chat written to both with fewer messages in the database, should refuse it and change nothing", async () => {
    const from = createFileChatStore({ root: join(folder, "both") });
    const log = sampleLog();
    await from.appendLog("both", log);
    const into = createPostgresChatStore({ db: database.db, userId: freshPerson() });
    await into.appendLog("both", log.slice(0, 2));
    const error = await importFileChats({ from, into }).catch((caught: unknown) => caught);
    expect(ChatImportConflictError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      chatId: "both",
      logPath: from.logPath("both"),
      databaseMessages: 2,
      fileMessages: log.length,
    });
    expect(await into.readLog("both")).toEqual(log.slice(0, 2));
  });
});

describe("createPostgresChatDirectory", () => {
  it("should list chats with a message, titled by the first one, a page at a time, and remove one whole", async () => {
    const store = createPostgresChatStore({ db: database.db, userId: freshPerson() });
    const directory = createPostgresChatDirectory(store);
    const log = sampleLog();
    for (const chatId of ["one", "two", "three"]) await store.appendLog(chatId, log.slice(0, 2));
    await store.writeTranscript("empty", buildTranscriptFile({ id: "empty", kept: [] }));
    const page = await directory.list({ offset: 1, limit: 1 });
    expect(page.total).toBe(3);
    expect(page.chats.map((chat) => chat.id)).toEqual(["two"]);
    const first = log[0]?.parts[0];
    expect(page.chats[0]?.title).toBe(first?.type === "text" ? first.text.split("\n")[0]?.trim().slice(0, 80) : "");
    expect(await directory.list({ offset: 5, limit: 2 })).toEqual({ chats: [], total: 3 });
    expect(await directory.remove("two")).toBe(true);
    expect(await directory.remove("two")).toBe(false);
    expect(await store.readLog("two")).toEqual([]);
    expect((await directory.list({ offset: 0, limit: 10 })).chats.map((chat) => chat.id)).toEqual(["three", "one"]);
  });
});
