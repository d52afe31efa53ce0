import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ChatLogCorruptError, ChatStoreReadError, TranscriptCorruptError } from "../errors.js";
import { createFileChatStore } from "./file-store.node.js";
import { sampleLog, sampleSummary } from "./testing/fixtures.js";
import { buildTranscriptFile, keptSeqs } from "./transcript-file.js";

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function temporaryRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "conch-files-"));
  roots.push(root);
  return root;
}

/** How a version-1 engine from before `summary`, `seqs` and `factor` read a transcript: only what it knew. */
const legacyReader = z.object({
  version: z.literal(1),
  id: z.string(),
  model: z.string().optional(),
  updatedAt: z.number().optional(),
  messages: z.array(
    z.object({
      role: z.string(),
      parts: z.array(z.record(z.string(), z.unknown())),
      model: z.string().optional(),
      createdAt: z.number().optional(),
    }),
  ),
});

describe("createFileChatStore", () => {
  describe("given a chat written through the store", () => {
    it("should lay it out as api-sessions/<id>.json and chats/<id>.jsonl, private, with no temporary files left", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      const log = sampleLog();
      await store.appendLog("trip", log);
      await store.writeTranscript("trip", buildTranscriptFile({ id: "trip", kept: log.slice(3) }));
      expect(store.transcriptPath("trip")).toBe(join(root, "api-sessions", "trip.json"));
      expect(store.logPath("trip")).toBe(join(root, "chats", "trip.jsonl"));
      expect(await readdir(join(root, "api-sessions"))).toEqual(["trip.json"]);
      expect(await readdir(join(root, "chats"))).toEqual(["trip.jsonl"]);
      const lines = (await readFile(store.logPath("trip"), "utf8")).split("\n");
      expect(lines.pop()).toBe("");
      expect(lines.map((line) => JSON.parse(line))).toEqual(log);
      expect((await stat(store.transcriptPath("trip"))).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(store.transcriptPath("trip"), "utf8"))).toMatchObject({
        version: 1,
        id: "trip",
      });
    });
  });

  describe("given a version-1 file written before summary, seqs and factor existed", () => {
    it("should read it as before, with its kept messages at the end of the log", async () => {
      const root = await temporaryRoot();
      const legacy = {
        version: 1,
        id: "old",
        model: "gpt-4o",
        updatedAt: 1_690_000_000_000,
        messages: [
          { role: "user", parts: [{ type: "text", text: "And this one?" }] },
          { role: "assistant", parts: [{ type: "text", text: "That is tram 28." }] },
        ],
      };
      await mkdir(join(root, "api-sessions"), { recursive: true });
      await writeFile(join(root, "api-sessions", "old.json"), JSON.stringify(legacy, null, 2));
      const store = createFileChatStore({ root });
      await store.appendLog("old", sampleLog());

      const file = await store.readTranscript("old");
      expect(file).toEqual(legacy);
      expect(file?.summary).toBeUndefined();
      expect(file?.factor).toBeUndefined();
      expect(keptSeqs(file!, (await store.readLog("old")).length)).toEqual([3, 4]);
      // The next write by this version adds the new fields to the same file.
      await store.writeTranscript("old", { ...file!, seqs: [3, 4], factor: 1.1 });
      expect(await store.readTranscript("old")).toEqual({ ...legacy, seqs: [3, 4], factor: 1.1 });
    });
  });

  describe("given a file written by this version, read by a version-1 reader that predates it", () => {
    it("should read the same messages, ignoring summary, seqs, factor and later fields", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      const log = sampleLog();
      const file = {
        ...buildTranscriptFile({ id: "new", kept: log.slice(3), summary: sampleSummary(3), factor: 1.3, model: "m" }),
        readUntil: 2,
      };
      await store.writeTranscript("new", file);
      const seenByOldReader = legacyReader.parse(JSON.parse(await readFile(store.transcriptPath("new"), "utf8")));
      expect(seenByOldReader).toEqual({
        version: 1,
        id: "new",
        model: "m",
        messages: withoutLaterFields(file.messages),
      });
    });
  });

  describe("given that file rewritten by a version-1 writer that drops what it does not know (a rollback)", () => {
    it("should stay readable, with the same messages at the same places; only the summary (and factor, and how answers ended) are gone", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      const log = sampleLog();
      await store.appendLog("rollback", log);
      const file = {
        ...buildTranscriptFile({ id: "rollback", kept: log.slice(3), summary: sampleSummary(3), factor: 1.3 }),
        readUntil: 2,
      };
      await store.writeTranscript("rollback", file);
      const path = store.transcriptPath("rollback");
      const oldWriterOutput = legacyReader.parse(JSON.parse(await readFile(path, "utf8")));
      await writeFile(path, JSON.stringify(oldWriterOutput));

      const reread = await createFileChatStore({ root }).readTranscript("rollback");
      expect(reread).not.toBeNull();
      expect(reread?.messages).toEqual(withoutLaterFields(file.messages));
      expect(keptSeqs(reread!, log.length)).toEqual(file.seqs);
      expect(reread?.summary).toBeUndefined();
      expect(reread?.factor).toBeUndefined();
      expect(await store.readLog("rollback")).toEqual(log);
    });
  });

  describe.each([
    ["JSON cut short", '{"version":1,"id":"bad","messages":[{"role":"us', "not JSON"],
    ["an empty file", "", "not JSON"],
    ["JSON of the wrong shape", '{"version":1,"id":"bad","messages":"none"}', "messages"],
    ["bytes that are not UTF-8", Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), "not UTF-8"],
  ])("given a transcript file holding %s", (_case, content, why) => {
    it("should throw TranscriptCorruptError naming the file, keep the file aside, and leave the log alone", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      await store.appendLog("bad", sampleLog());
      await mkdir(join(root, "api-sessions"), { recursive: true });
      await writeFile(store.transcriptPath("bad"), content);

      const error = await store.readTranscript("bad").catch((caught: unknown) => caught);
      expect(TranscriptCorruptError.isInstance(error)).toBe(true);
      if (!TranscriptCorruptError.isInstance(error)) return;
      expect(error.location).toBe(store.transcriptPath("bad"));
      expect(error.message).toContain(store.transcriptPath("bad"));
      expect(error.message).toContain(error.keptAt);
      expect(error.reason).toContain(why);
      expect(error.keptAt).toMatch(/bad\.json\.corrupt-\d+-[0-9a-f]+$/);
      expect(await readFile(error.keptAt)).toEqual(Buffer.from(content));
      // The next read finds no transcript (the engine rebuilds it from the log), never a silent empty chat.
      expect(await store.readTranscript("bad")).toBeNull();
      expect(await store.readLog("bad")).toEqual(sampleLog());
    });
  });

  describe("given a transcript path the store cannot read (a folder)", () => {
    it("should throw ChatStoreReadError naming it and move nothing", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      await mkdir(store.transcriptPath("dir"), { recursive: true });
      const error = await store.readTranscript("dir").catch((caught: unknown) => caught);
      expect(ChatStoreReadError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(store.transcriptPath("dir"));
      expect(await readdir(join(root, "api-sessions"))).toEqual(["dir.json"]);
    });
  });

  describe("given temporary files left beside a transcript by a crashed writer", () => {
    it("should read the transcript and never the temporary files", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      const file = buildTranscriptFile({ id: "t", kept: sampleLog() });
      await store.writeTranscript("t", file);
      await writeFile(`${store.transcriptPath("t")}.tmp-123-abcdef`, '{"version":1,"id":"t","mess');
      await writeFile(`${store.transcriptPath("t")}.tmp-124-abcdef`, JSON.stringify({ ...file, messages: [] }));
      expect(await store.readTranscript("t")).toEqual(file);
      expect(await store.readTranscript("t.json.tmp-123-abcdef")).toBeNull();
    });
  });

  describe("given a log whose last line was cut short by a crash mid-append", () => {
    it("should throw ChatLogCorruptError once, keep the whole file aside, and go on with the complete messages", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      const log = sampleLog();
      await store.appendLog("torn", log.slice(0, 3));
      const torn = JSON.stringify(log[3]).slice(0, 40);
      await appendFile(store.logPath("torn"), torn);
      const whole = await readFile(store.logPath("torn"));

      const fresh = createFileChatStore({ root });
      const error = await fresh.readLog("torn").catch((caught: unknown) => caught);
      expect(ChatLogCorruptError.isInstance(error)).toBe(true);
      if (!ChatLogCorruptError.isInstance(error)) return;
      expect(error).toMatchObject({ torn: true, repaired: true, keptMessages: 3, line: 4 });
      expect(error.message).toContain(fresh.logPath("torn"));
      expect(error.keptAt).toMatch(/torn\.jsonl\.torn-\d+-[0-9a-f]+$/);
      expect(await readFile(error.keptAt)).toEqual(whole);

      expect(await fresh.readLog("torn")).toEqual(log.slice(0, 3));
      await fresh.appendLog("torn", log.slice(3));
      expect(await createFileChatStore({ root }).readLog("torn")).toEqual(log);
    });

    it("should report it to an append too, before appending after the complete messages", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      const log = sampleLog();
      await store.appendLog("torn", log.slice(0, 2));
      await appendFile(store.logPath("torn"), '{"seq":2,"ro');
      const fresh = createFileChatStore({ root });
      const error = await fresh.appendLog("torn", log.slice(2)).catch((caught: unknown) => caught);
      expect(ChatLogCorruptError.isInstance(error)).toBe(true);
      await fresh.appendLog("torn", log.slice(2));
      expect(await fresh.readLog("torn")).toEqual(log);
    });
  });

  describe.each([
    ["a line that is not JSON", (lines: string[]) => [lines[0], "{oops", ...lines.slice(2)], 2],
    ["a line that is not a message", (lines: string[]) => [...lines.slice(0, 2), '{"seq":2}', lines[3]], 3],
    ["a message out of place", (lines: string[]) => [lines[0], ...lines.slice(2)], 2],
    ["an empty line", (lines: string[]) => [lines[0], "", ...lines.slice(1)], 2],
  ])("given a log with %s among complete lines", (_case, damage, line) => {
    it("should throw ChatLogCorruptError at that line and change nothing on every read over it; an append, which reads only the log's end, goes on after it", async () => {
      const root = await temporaryRoot();
      const store = createFileChatStore({ root });
      const log = sampleLog();
      await store.appendLog("broken", log.slice(0, 4));
      const lines = (await readFile(store.logPath("broken"), "utf8")).split("\n").slice(0, -1);
      const damaged = `${damage(lines).join("\n")}\n`;
      await writeFile(store.logPath("broken"), damaged);

      const fresh = createFileChatStore({ root });
      const reads = [() => fresh.readLog("broken"), () => fresh.readChat("broken", { page: { before: 3, limit: 3 } })];
      for (const attempt of reads) {
        const error = await attempt().catch((caught: unknown) => caught);
        expect(ChatLogCorruptError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ torn: false, repaired: false, line, keptAt: fresh.logPath("broken") });
      }
      expect(await readFile(fresh.logPath("broken"), "utf8")).toBe(damaged);
      expect(await readdir(join(root, "chats"))).toEqual(["broken.jsonl"]);
      // A turn never reads the whole log: the damage is found where the log is read over it, never lost.
      await fresh.appendLog("broken", log.slice(4));
      const after = await readFile(fresh.logPath("broken"), "utf8");
      expect(after.startsWith(damaged)).toBe(true);
      expect(JSON.parse(after.slice(damaged.length))).toEqual(log[4]);
      // A reader whose transcript records the tree up to the damage reads only the log's end. (Without a
      // transcript, the whole log is read for its forks, and the damage is found.)
      await fresh.writeTranscript("broken", {
        ...buildTranscriptFile({ id: "broken", kept: [] }),
        branches: { forks: [], through: 4, activeLeaf: 3 },
      });
      expect(
        (await createFileChatStore({ root }).readChat("broken", { page: { limit: 1 }, kept: false })).page,
      ).toEqual([log[4]]);
      const error = await createFileChatStore({ root })
        .readLog("broken")
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "ChatLogCorruptError", repaired: false, line });
    });
  });

  describe("given a log appended to by another store on the same root", () => {
    it("should notice and check the next seq against the file, not its own memory", async () => {
      const root = await temporaryRoot();
      const first = createFileChatStore({ root });
      const second = createFileChatStore({ root });
      const log = sampleLog();
      await first.appendLog("shared", log.slice(0, 1));
      await second.appendLog("shared", log.slice(1, 2));
      const error = await first.appendLog("shared", log.slice(1, 2)).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "TurnSequenceError", expectedSeq: 2, actualSeq: 1 });
      await first.appendLog("shared", log.slice(2));
      expect(await second.readLog("shared")).toEqual(log);
    });
  });
});

/** A message as a version-1 reader keeps it: without the fields later versions added (`finishReason`). */
function withoutLaterFields<M extends { finishReason?: unknown }>(messages: readonly M[]): Omit<M, "finishReason">[] {
  return messages.map(({ finishReason, ...message }) => message);
}
