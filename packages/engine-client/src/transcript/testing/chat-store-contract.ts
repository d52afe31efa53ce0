import { describe, expect, it } from "vitest";
import { InvalidChatIdError, InvalidChatRecordError, TranscriptCorruptError, TurnSequenceError } from "../../errors.js";
import type { ChatMessage } from "../../messages.js";
import type { ChatDirectory } from "../chat-directory.js";
import type { ChatStore, ReadChatOptions } from "../chat-store.js";
import { buildTranscriptFile, type TranscriptFile } from "../transcript-file.js";
import { branchedLog, withBranches } from "./branched-chat.js";
import { bigTranscript, sampleLog, sampleSummary } from "./fixtures.js";

/** How a contract run makes stores. */
export interface ChatStoreContractOptions {
  /**
   * A second store on the same storage as the last one `create` made (the same IndexedDB database, the same
   * Postgres database): another tab, process or instance. Without it the tests of shared storage are not run.
   */
  readonly second?: () => Promise<ChatStore>;
  /**
   * A new store on the same storage as the last one `create` made, opened once that one is done with (a restarted
   * process); default: `second`. Without either, the tests of a re-opened store are not run.
   */
  readonly reopen?: () => Promise<ChatStore>;
}

/**
 * The contract every {@link ChatStore} passes: memory and file system (chat-stores.test.ts), IndexedDB in Chromium
 * (indexeddb-store.browser.test.ts), PGlite and a real Postgres (postgres/postgres-store.test.ts). Runs in Node and
 * in a browser, so it uses no Node API.
 */
export function chatStoreContract(
  name: string,
  createStore: () => Promise<ChatStore>,
  options: ChatStoreContractOptions = {},
): void {
  describe(`the ${name} chat store`, () => {
    describe("given a chat never written", () => {
      it("should read an empty log, no transcript and 0 bytes", async () => {
        const store = await createStore();
        expect(await store.readLog("new")).toEqual([]);
        expect(await store.readTranscript("new")).toBeNull();
        expect(await store.transcriptBytes("new")).toBe(0);
      });
    });

    describe("given a log appended in two batches", () => {
      it("should read back every message as written, thinking signatures untouched", async () => {
        const store = await createStore();
        const log = sampleLog();
        await store.appendLog("trip", log.slice(0, 3));
        await store.appendLog("trip", log.slice(3));
        await store.appendLog("trip", []);
        expect(await store.readLog("trip")).toEqual(log);
        expect((await store.readLog("trip"))[1]?.parts[0]).toEqual({
          type: "thinking",
          text: "They want a plan.",
          signature: "EqQBCkYIBRgCKkDx+/=\u0000sig",
        });
      });

      it("should hand out copies, so a caller's change does not reach the store", async () => {
        const store = await createStore();
        await store.appendLog("copy", sampleLog());
        const first = await store.readLog("copy");
        first.pop();
        expect(await store.readLog("copy")).toHaveLength(5);
      });
    });

    describe("given messages whose seq does not follow the log", () => {
      it("should refuse them with TurnSequenceError and keep the log as it was", async () => {
        const store = await createStore();
        const log = sampleLog();
        await store.appendLog("seq", log.slice(0, 2));
        const refused = [log.slice(3), log.slice(0, 1), [log[2]!, log[4]!]];
        for (const batch of refused) {
          const error = await store.appendLog("seq", batch).catch((caught: unknown) => caught);
          expect(TurnSequenceError.isInstance(error)).toBe(true);
        }
        expect(await store.readLog("seq")).toEqual(log.slice(0, 2));
        await store.appendLog("seq", log.slice(2));
        expect(await store.readLog("seq")).toEqual(log);
      });
    });

    describe("given a message or transcript of the wrong shape", () => {
      it("should refuse it with InvalidChatRecordError and write nothing", async () => {
        const store = await createStore();
        const notAMessage = { seq: 0, role: "robot", parts: [] } as unknown as ReturnType<typeof sampleLog>[number];
        const logError = await store.appendLog("shape", [notAMessage]).catch((caught: unknown) => caught);
        expect(InvalidChatRecordError.isInstance(logError)).toBe(true);
        const file = buildTranscriptFile({ id: "shape", kept: sampleLog() });
        const transcriptErrors = await Promise.all([
          store.writeTranscript("shape", { ...file, id: "other" }).catch((caught: unknown) => caught),
          store.writeTranscript("shape", { ...file, seqs: [0] }).catch((caught: unknown) => caught),
        ]);
        expect(transcriptErrors.map((error) => InvalidChatRecordError.isInstance(error))).toEqual([true, true]);
        expect(await store.readLog("shape")).toEqual([]);
        expect(await store.readTranscript("shape")).toBeNull();
      });
    });

    describe("given chat ids that could escape the folder or are no usable name", () => {
      it.each(["../x", "..", ".", "a/b", "a\\b", "a\u0000b", "", "/etc/passwd", "x".repeat(201)])(
        "should refuse %j in every method before touching storage",
        async (chatId) => {
          const store = await createStore();
          const file = buildTranscriptFile({ id: chatId, kept: [] });
          const calls = [
            store.readLog(chatId),
            store.appendLog(chatId, sampleLog()),
            store.readTranscript(chatId),
            store.writeTranscript(chatId, file),
            store.transcriptBytes(chatId),
          ];
          for (const call of calls) {
            const error = await call.catch((caught: unknown) => caught);
            expect(InvalidChatIdError.isInstance(error)).toBe(true);
          }
        },
      );
    });

    describe("given a transcript with a summary, seqs, factor and fields of a later version", () => {
      it("should read it back equal, unknown fields included", async () => {
        const store = await createStore();
        const log = sampleLog();
        const file: TranscriptFile = {
          ...buildTranscriptFile({ id: "t", kept: log.slice(3), summary: sampleSummary(3), factor: 1.4, model: "m" }),
          readUntil: 2,
          learned: [{ seq: 0, at: 10 }],
        };
        await store.writeTranscript("t", file);
        expect(await store.readTranscript("t")).toEqual(file);
        const replaced = { ...file, messages: file.messages.slice(1), seqs: [4] };
        await store.writeTranscript("t", replaced);
        expect(await store.readTranscript("t")).toEqual(replaced);
      });
    });

    describe("given a reader's check that finds the transcript unusable", () => {
      it("should move it aside as corrupt, with a TranscriptCorruptError naming the reason, and read null next", async () => {
        const store = await createStore();
        const log = sampleLog();
        await store.appendLog("checked", log);
        const file = buildTranscriptFile({ id: "checked", kept: log, previous: null });
        await store.writeTranscript("checked", file);
        // A check that passes changes nothing.
        expect(await store.readTranscript("checked", { check: () => null })).toEqual(file);
        const error = await store
          .readTranscript("checked", {
            check: (read) => (read.id === "checked" ? "the field health is not valid" : null),
          })
          .catch((caught: unknown) => caught);
        expect(TranscriptCorruptError.isInstance(error)).toBe(true);
        const corrupt = error as TranscriptCorruptError;
        expect(corrupt.reason).toBe("the field health is not valid");
        expect(corrupt.keptAt).not.toBe(corrupt.location);
        expect(await store.readTranscript("checked")).toBeNull();
        expect(await store.readLog("checked")).toEqual(log);
      });
    });

    describe("given a transcript of more than 8 MB", () => {
      it("should round-trip it and report its size in bytes", async () => {
        const store = await createStore();
        const file = bigTranscript("big", "eight", 8);
        await store.writeTranscript("big", file);
        expect(await store.readTranscript("big")).toEqual(file);
        const bytes = await store.transcriptBytes("big");
        expect(bytes).toBeGreaterThan(8 * 1024 * 1024);
        expect(bytes).toBe(new TextEncoder().encode(JSON.stringify(await store.readTranscript("big"))).byteLength);
      });
    });

    describe("given many writes to one chat at once", () => {
      it("should run them one after another in call order: every append succeeds and the last transcript wins", async () => {
        const store = await createStore();
        const appends = Array.from({ length: 100 }, (_, seq) =>
          store.appendLog("busy", [
            { seq, role: "user", parts: [{ type: "text", text: `message ${seq} `.repeat(500) }] },
          ]),
        );
        const files = Array.from({ length: 40 }, (_, round) => ({
          ...buildTranscriptFile({ id: "busy", kept: [] }),
          round,
          padding: `${round}`.repeat(50_000),
        }));
        const writes = files.map((file) => store.writeTranscript("busy", file));
        // Queued behind all the writes, so it sees the last one.
        const read = store.readTranscript("busy");
        await Promise.all([...appends, ...writes]);
        expect((await read)?.round).toBe(39);
        const log = await store.readLog("busy");
        expect(log.map((message) => message.seq)).toEqual(Array.from({ length: 100 }, (_, seq) => seq));
        expect(await store.readTranscript("busy")).toEqual(files[39]);
      });

      it("should keep other chats apart", async () => {
        const store = await createStore();
        await Promise.all(
          ["a", "b", "c"].flatMap((chatId) =>
            Array.from({ length: 10 }, (_, seq) =>
              store.appendLog(chatId, [{ seq, role: "user", parts: [{ type: "text", text: `${chatId}${seq}` }] }]),
            ),
          ),
        );
        for (const chatId of ["a", "b", "c"]) {
          const texts = (await store.readLog(chatId)).map((message) => message.parts[0]);
          expect(texts).toEqual(Array.from({ length: 10 }, (_, seq) => ({ type: "text", text: `${chatId}${seq}` })));
        }
      });
    });

    describe("given a chat read with readChat", () => {
      /** A log of `length` plain messages, the person's and the assistant's in turn. */
      const plainLog = (length: number): ChatMessage[] =>
        Array.from({ length }, (_, seq) => ({
          seq,
          role: seq % 2 === 0 ? "user" : "assistant",
          parts: [{ type: "text", text: `message ${seq} ${"é🐚".repeat(seq % 7)}` }],
          createdAt: seq,
        }));

      it("should read a chat never written as empty, with no transcript", async () => {
        const store = await createStore();
        expect(await store.readChat("none", { page: { limit: 10 } })).toMatchObject({
          nextSeq: 0,
          transcript: null,
          tree: { nextSeq: 0, forks: [] },
          leaf: -1,
          keptFrom: 0,
          kept: [],
          page: [],
          hasOlder: false,
        });
      });

      it("should read the whole log as the kept part when there is no transcript", async () => {
        const store = await createStore();
        await store.appendLog("fresh", plainLog(12));
        const reading = await store.readChat("fresh");
        expect(reading).toMatchObject({ nextSeq: 12, transcript: null, keptFrom: 0, page: [], hasOlder: false });
        expect(reading.kept).toEqual(plainLog(12));
      });

      it("should read the state and the log from the transcript's first kept seq to the end", async () => {
        const store = await createStore();
        const log = plainLog(40);
        await store.appendLog("kept", log.slice(0, 37));
        const file = buildTranscriptFile({ id: "kept", kept: log.slice(30, 37), summary: sampleSummary(30) });
        await store.writeTranscript("kept", file);
        // The turn after the transcript was written: its messages are in the kept part too.
        await store.appendLog("kept", log.slice(37));
        const reading = await store.readChat("kept");
        expect(reading.nextSeq).toBe(40);
        expect(reading.transcript).toEqual(file);
        expect(reading.keptFrom).toBe(30);
        expect(reading.kept).toEqual(log.slice(30));
      });

      it("should start the kept part at the summary's first kept seq when the transcript keeps no message, and always hold the last message", async () => {
        const store = await createStore();
        const log = plainLog(20);
        await store.appendLog("summary-only", log);
        await store.writeTranscript(
          "summary-only",
          buildTranscriptFile({ id: "summary-only", kept: [], summary: sampleSummary(15) }),
        );
        expect((await store.readChat("summary-only")).kept).toEqual(log.slice(15));
        await store.writeTranscript(
          "summary-only",
          buildTranscriptFile({ id: "summary-only", kept: [], summary: sampleSummary(25) }),
        );
        expect((await store.readChat("summary-only")).kept).toEqual(log.slice(19));
      });

      it("should read a transcript without seqs as keeping the log's last messages, and one holding more than the log from 0", async () => {
        const store = await createStore();
        const log = plainLog(10);
        await store.appendLog("old", log);
        const { seqs: _seqs, ...old } = buildTranscriptFile({ id: "old", kept: log.slice(7) });
        await store.writeTranscript("old", old as TranscriptFile);
        expect((await store.readChat("old")).kept).toEqual(log.slice(7));
        const { seqs: _more, ...tooMany } = buildTranscriptFile({ id: "old", kept: [...log, ...log] });
        await store.writeTranscript("old", tooMany as TranscriptFile);
        expect((await store.readChat("old")).kept).toEqual(log);
      });

      it("should read pages from the end, each the newest messages before `before`, and say whether older ones exist", async () => {
        const store = await createStore();
        const log = plainLog(25);
        await store.appendLog("paged", log);
        await store.writeTranscript("paged", buildTranscriptFile({ id: "paged", kept: log.slice(20) }));
        const newest = await store.readChat("paged", { page: { limit: 10 } });
        expect(newest.page).toEqual(log.slice(15));
        expect(newest.hasOlder).toBe(true);
        expect(newest.kept).toEqual(log.slice(20));
        const middle = await store.readChat("paged", { page: { before: 15, limit: 10 }, kept: false });
        expect(middle).toMatchObject({ nextSeq: 25, keptFrom: 25, kept: [], hasOlder: true });
        expect(middle.page).toEqual(log.slice(5, 15));
        const oldest = await store.readChat("paged", { page: { before: 5, limit: 10 } });
        expect(oldest.page).toEqual(log.slice(0, 5));
        expect(oldest.hasOlder).toBe(false);
        expect(oldest.kept).toEqual(log.slice(20));
        expect((await store.readChat("paged", { page: { before: 0, limit: 10 } })).page).toEqual([]);
        expect((await store.readChat("paged", { page: { before: 1_000, limit: 3 } })).page).toEqual(log.slice(22));
        const whole = await store.readChat("paged", { page: { limit: Number.POSITIVE_INFINITY } });
        expect(whole.page).toEqual(log);
        expect(whole.hasOlder).toBe(false);
      });

      it("should read every page of a long log, page by page, equal to the whole log", async () => {
        const store = await createStore();
        const log = plainLog(230);
        await store.appendLog("long", log.slice(0, 100));
        await store.appendLog("long", log.slice(100));
        const pages: ChatMessage[] = [];
        let before: number | undefined;
        for (;;) {
          const reading = await store.readChat("long", {
            page: { limit: 17, ...(before !== undefined && { before }) },
          });
          pages.unshift(...reading.page);
          if (!reading.hasOlder) break;
          before = reading.page[0]!.seq;
        }
        expect(pages).toEqual(log);
        // Appended after the pages were read: the next read has it.
        await store.appendLog("long", plainLog(231).slice(230));
        expect((await store.readChat("long", { page: { limit: 2 } })).page).toEqual(plainLog(231).slice(229));
      });

      it("should give the check the log's length, and move a transcript it refuses aside as corrupt", async () => {
        const store = await createStore();
        const log = plainLog(6);
        await store.appendLog("checked", log);
        await store.writeTranscript("checked", buildTranscriptFile({ id: "checked", kept: log.slice(4) }));
        const lengths: number[] = [];
        const error = await store
          .readChat("checked", {
            check: (_file, nextSeq) => {
              lengths.push(nextSeq);
              return "not for this log";
            },
          })
          .catch((caught: unknown) => caught);
        expect(lengths).toEqual([6]);
        expect(TranscriptCorruptError.isInstance(error)).toBe(true);
        expect((error as TranscriptCorruptError).reason).toBe("not for this log");
        const after = await store.readChat("checked");
        expect(after.transcript).toBeNull();
        expect(after.kept).toEqual(log);
      });

      it("should hand out copies, so a caller's change does not reach the store", async () => {
        const store = await createStore();
        await store.appendLog("copies", plainLog(4));
        const reading = await store.readChat("copies", { page: { limit: 2 } });
        reading.kept.pop();
        (reading.page[0]!.parts as unknown[]).push({ type: "text", text: "changed" });
        expect((await store.readChat("copies", { page: { limit: 2 } })).page).toEqual(plainLog(4).slice(2));
      });
    });

    describe("given a branched log (edits and regenerates: each message's parent)", () => {
      const seqsOf = (messages: readonly ChatMessage[]) => messages.map((message) => message.seq);
      const everyBranch = { page: { limit: 100 } };

      it("should keep each message's parent and read every version in seq order, as today's readers do", async () => {
        const store = await createStore();
        await store.appendLog("tree", branchedLog.slice(0, 5));
        await store.appendLog("tree", branchedLog.slice(5));
        expect(await store.readLog("tree")).toEqual(branchedLog);
        const reading = await store.readChat("tree", everyBranch);
        expect(reading.tree.forks).toEqual([
          { seq: 4, parent: 1, role: "user" },
          { seq: 6, parent: 4, role: "assistant" },
          { seq: 7, parent: -1, role: "user" },
        ]);
      });

      it("should store the active leaf with the transcript and read that branch back, along its path", async () => {
        const store = await createStore();
        await store.appendLog("leaf", branchedLog);
        const file = withBranches(buildTranscriptFile({ id: "leaf", kept: branchedLog.slice(0, 4) }), 9, 3);
        await store.writeTranscript("leaf", file);
        expect(await store.readTranscript("leaf")).toEqual(file);
        const active = await store.readChat("leaf", everyBranch);
        expect(active).toMatchObject({ nextSeq: 9, transcript: file, leaf: 3, hasOlder: false });
        expect(seqsOf(active.page)).toEqual([0, 1, 2, 3]);
        expect(seqsOf(active.kept)).toEqual([0, 1, 2, 3]);
      });

      it("should read any branch along its path: through a seq (its newest leaf) or ending at a leaf", async () => {
        const store = await createStore();
        await store.appendLog("paths", branchedLog);
        await store.writeTranscript("paths", withBranches(buildTranscriptFile({ id: "paths", kept: [] }), 9, 8));
        const through = async (options: ReadChatOptions) => {
          const reading = await store.readChat("paths", options);
          return { leaf: reading.leaf, page: seqsOf(reading.page), kept: seqsOf(reading.kept) };
        };
        // The active branch's kept part starts where its transcript keeps (none kept: its last message); another
        // branch, sharing no fold, is kept from its root.
        expect(await through(everyBranch)).toEqual({ leaf: 8, page: [7, 8], kept: [8] });
        expect(await through({ branch: 4, ...everyBranch })).toEqual({
          leaf: 6,
          page: [0, 1, 4, 6],
          kept: [0, 1, 4, 6],
        });
        expect(await through({ leaf: 5, ...everyBranch })).toEqual({ leaf: 5, page: [0, 1, 4, 5], kept: [0, 1, 4, 5] });
        const paged = await store.readChat("paths", { branch: 2, page: { limit: 2 } });
        expect(paged).toMatchObject({ leaf: 3, hasOlder: true });
        expect(seqsOf(paged.page)).toEqual([2, 3]);
        const older = await store.readChat("paths", { branch: 2, kept: false, page: { before: 2, limit: 2 } });
        expect(older).toMatchObject({ leaf: 3, hasOlder: false, kept: [] });
        expect(seqsOf(older.page)).toEqual([0, 1]);
        const unknown = await store.readChat("paths", { branch: 9 }).catch((error: unknown) => error);
        expect(TurnSequenceError.isInstance(unknown)).toBe(true);
      });

      it("should take messages appended after the transcript (an edit cut short by a crash) as the active branch", async () => {
        const store = await createStore();
        await store.appendLog("crash", branchedLog.slice(0, 7));
        await store.writeTranscript("crash", withBranches(buildTranscriptFile({ id: "crash", kept: [] }), 7, 3));
        await store.appendLog("crash", branchedLog.slice(7));
        const reading = await store.readChat("crash", everyBranch);
        expect(reading).toMatchObject({ nextSeq: 9, leaf: 8 });
        expect(seqsOf(reading.page)).toEqual([7, 8]);
        expect(reading.tree.forks.map((fork) => fork.seq)).toEqual([4, 6, 7]);
        expect(await store.readLog("crash")).toEqual(branchedLog);
      });

      it("should read today's log and transcript (no parents, no record of the tree) as one branch", async () => {
        const store = await createStore();
        const log = sampleLog();
        await store.appendLog("today", log);
        await store.writeTranscript("today", buildTranscriptFile({ id: "today", kept: log.slice(2) }));
        const reading = await store.readChat("today", everyBranch);
        expect(reading).toMatchObject({ nextSeq: 5, tree: { nextSeq: 5, forks: [] }, leaf: 4, keptFrom: 2 });
        expect(reading.page).toEqual(log);
        expect(reading.kept).toEqual(log.slice(2));
        expect((await store.readChat("today", { branch: 1, ...everyBranch })).leaf).toBe(4);
      });
    });

    describe("given a failed call", () => {
      it("should not block the calls queued after it", async () => {
        const store = await createStore();
        const failed = store.appendLog("after", [sampleLog()[1]!]);
        const next = store.appendLog("after", sampleLog().slice(0, 1));
        expect(TurnSequenceError.isInstance(await failed.catch((caught: unknown) => caught))).toBe(true);
        await next;
        expect(await store.readLog("after")).toHaveLength(1);
      });
    });

    describe("given its chat directory", () => {
      /** The store's directory; every store of this package has one. */
      function directoryOf(store: ChatStore): ChatDirectory {
        expect(store.directory).toBeDefined();
        return store.directory as ChatDirectory;
      }
      /** Resolves once the clock has moved past `since`: two writes then have different times. */
      // Past `since` by more than a tick of the kernel's coarse clock, which stamps a file's mtime (up to 10 ms
      // behind Date.now()): a run once saw two appends a moment apart share one time on the file store.
      async function clockPast(since: number): Promise<void> {
        while (Date.now() <= since + 20) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      const said = (seq: number, text: string): ChatMessage => ({ seq, role: "user", parts: [{ type: "text", text }] });

      it("should list nothing for a store never written, and no chat that only was read", async () => {
        const store = await createStore();
        await store.readLog("only-read");
        await store.appendLog("only-empty", []);
        expect(await directoryOf(store).list({ offset: 0, limit: 10 })).toEqual({ chats: [], total: 0 });
      });

      it("should list the chats newest change first, titled by the first words of their first message", async () => {
        const store = await createStore();
        const directory = directoryOf(store);
        await store.appendLog("lisbon", sampleLog().slice(0, 1));
        await clockPast(Date.now());
        await store.appendLog("soup", [said(0, "  A recipe   for\tsoup  \nwith leeks, please")]);
        await clockPast(Date.now());
        await store.appendLog("picture", [
          { seq: 0, role: "user", parts: [{ type: "picture", name: "a.png", mediaType: "image/png", data: "AA==" }] },
        ]);
        const { chats, total } = await directory.list({ offset: 0, limit: 10 });
        expect(total).toBe(3);
        expect(chats.map((chat) => [chat.id, chat.title])).toEqual([
          ["picture", "picture"],
          ["soup", "A recipe for soup"],
          ["lisbon", "Plan the trip to Lisbon — 3 days, 🐚 included."],
        ]);
        expect(chats[0]!.updated).toBeGreaterThan(chats[1]!.updated);
        expect(chats[1]!.updated).toBeGreaterThan(chats[2]!.updated);
        // A later message moves its chat to the front; its title stays the first message's.
        await clockPast(chats[0]!.updated);
        await store.appendLog("lisbon", [{ ...said(1, "Something else"), role: "assistant" }]);
        const moved = await directory.list({ offset: 0, limit: 10 });
        expect(moved.chats.map((chat) => chat.id)).toEqual(["lisbon", "picture", "soup"]);
        expect(moved.chats[0]?.title).toBe("Plan the trip to Lisbon — 3 days, 🐚 included.");
      });

      it("should give the list page by page, each chat once, with the count of all", async () => {
        const store = await createStore();
        const directory = directoryOf(store);
        for (const id of ["c1", "c2", "c3", "c4", "c5"]) await store.appendLog(id, [said(0, `chat ${id}`)]);
        const pages = [];
        for (let offset = 0; offset < 6; offset += 2) pages.push(await directory.list({ offset, limit: 2 }));
        expect(pages.map((page) => page.chats.length)).toEqual([2, 2, 1]);
        expect(pages.every((page) => page.total === 5)).toBe(true);
        expect(new Set(pages.flatMap((page) => page.chats.map((chat) => chat.id))).size).toBe(5);
        expect(await directory.list({ offset: 10, limit: 2 })).toEqual({ chats: [], total: 5 });
      });

      it("should cut a long first message's title to 80 characters, the last one an ellipsis", async () => {
        const store = await createStore();
        await store.appendLog("long", [said(0, "word ".repeat(40))]);
        const [chat] = (await directoryOf(store).list({ offset: 0, limit: 1 })).chats;
        expect([...(chat?.title ?? "")]).toHaveLength(80);
        expect(chat?.title.endsWith("…")).toBe(true);
      });

      it("should keep a person's title across reads and further messages, without moving the chat", async () => {
        const store = await createStore();
        const directory = directoryOf(store);
        await store.appendLog("first", [said(0, "the first chat")]);
        await clockPast(Date.now());
        await store.appendLog("second", [said(0, "the second chat")]);
        expect(await directory.rename("first", "  Trip\tplans \n(ignored second line)")).toBe(true);
        const listed = await directory.list({ offset: 0, limit: 10 });
        expect(listed.chats.map((chat) => [chat.id, chat.title])).toEqual([
          ["second", "the second chat"],
          ["first", "Trip plans"],
        ]);
        await store.appendLog("first", [said(1, "more")]);
        expect((await directory.list({ offset: 0, limit: 10 })).chats[0]).toMatchObject({
          id: "first",
          title: "Trip plans",
        });
      });

      it("should refuse a title with no words (InvalidChatRecordError), and say false for a chat never written", async () => {
        const store = await createStore();
        const directory = directoryOf(store);
        await store.appendLog("kept", [said(0, "keep me")]);
        const refused = await directory.rename("kept", " \n ").catch((caught: unknown) => caught);
        expect(InvalidChatRecordError.isInstance(refused)).toBe(true);
        expect((refused as InvalidChatRecordError).record).toBe("title");
        expect(await directory.rename("nobody", "A title")).toBe(false);
        expect((await directory.list({ offset: 0, limit: 10 })).chats.map((chat) => [chat.id, chat.title])).toEqual([
          ["kept", "keep me"],
        ]);
        const unsafe = await directory.rename("../up", "x").catch((caught: unknown) => caught);
        expect(InvalidChatIdError.isInstance(unsafe)).toBe(true);
      });

      it("should remove a chat whole (log, transcript, title), and say false for one never written", async () => {
        const store = await createStore();
        const directory = directoryOf(store);
        const log = sampleLog();
        await store.appendLog("gone", log);
        await store.writeTranscript("gone", buildTranscriptFile({ id: "gone", kept: log.slice(3) }));
        await directory.rename("gone", "Old name");
        await store.appendLog("stays", [said(0, "stays")]);
        expect(await directory.remove("gone")).toBe(true);
        expect(await store.readLog("gone")).toEqual([]);
        expect(await store.readTranscript("gone")).toBeNull();
        expect((await directory.list({ offset: 0, limit: 10 })).chats.map((chat) => chat.id)).toEqual(["stays"]);
        expect(await directory.remove("gone")).toBe(false);
        // The id written again is a new chat: titled by its own first words, not the old name.
        await store.appendLog("gone", [said(0, "a new start")]);
        expect((await directory.list({ offset: 0, limit: 10 })).chats.find((chat) => chat.id === "gone")?.title).toBe(
          "a new start",
        );
      });
    });

    const openAgain = options.reopen ?? options.second;
    if (openAgain !== undefined) {
      describe("given a store opened again on the same storage", () => {
        it("should read a branched chat's versions and its active leaf as the first wrote them", async () => {
          const store = await createStore();
          await store.appendLog("reopened", branchedLog);
          const file = withBranches(buildTranscriptFile({ id: "reopened", kept: branchedLog.slice(0, 2) }), 9, 5);
          await store.writeTranscript("reopened", file);
          const second = await openAgain();
          expect(await second.readLog("reopened")).toEqual(branchedLog);
          const reading = await second.readChat("reopened", { page: { limit: 100 } });
          expect(reading).toMatchObject({ nextSeq: 9, transcript: file, leaf: 5 });
          expect(reading.page.map((message) => message.seq)).toEqual([0, 1, 4, 5]);
          expect((await second.readChat("reopened", { branch: 7 })).kept.map((message) => message.seq)).toEqual([7, 8]);
        });
      });
    }

    const { second: openSecond } = options;
    // Registered only where there is shared storage, so no store reports a skipped test.
    if (openSecond === undefined) return;
    describe("given a second store on the same storage", () => {
      it("should read what the first wrote, as a restarted process would", async () => {
        const store = await createStore();
        const log = sampleLog();
        await store.appendLog("restart", log);
        const file = buildTranscriptFile({ id: "restart", kept: log.slice(3), summary: sampleSummary(3), factor: 1.5 });
        await store.writeTranscript("restart", file);
        const second = await openSecond();
        expect(await second.readLog("restart")).toEqual(log);
        expect(await second.readChat("restart", { page: { limit: 2 } })).toMatchObject({
          nextSeq: 5,
          transcript: file,
          tree: { nextSeq: 5, forks: [] },
          leaf: 4,
          keptFrom: 3,
          kept: log.slice(3),
          page: log.slice(3),
          hasOlder: true,
        });
        await second.appendLog("restart", [{ ...log[0]!, seq: 5 }]);
        expect((await store.readChat("restart")).kept).toEqual([...log.slice(3), { ...log[0]!, seq: 5 }]);
        expect(await second.readTranscript("restart")).toEqual(file);
        expect(await second.transcriptBytes("restart")).toBe(await store.transcriptBytes("restart"));
      });

      it("should let one of two appends of the same seq at once win and refuse the other with TurnSequenceError", async () => {
        const store = await createStore();
        const second = await openSecond();
        const log = sampleLog();
        for (let round = 0; round < log.length; round++) {
          const results = await Promise.allSettled([
            store.appendLog("race", [log[round]!]),
            second.appendLog("race", [{ ...log[round]!, parts: [{ type: "text", text: `second ${round}` }] }]),
          ]);
          expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
          const refused = results.find((result) => result.status === "rejected");
          expect(TurnSequenceError.isInstance(refused?.status === "rejected" ? refused.reason : null)).toBe(true);
        }
        expect((await store.readLog("race")).map((message) => message.seq)).toEqual([0, 1, 2, 3, 4]);
        expect(await second.readLog("race")).toEqual(await store.readLog("race"));
      });
    });
  });
}
