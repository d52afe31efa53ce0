import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeProvider } from "@conch/fake-provider";
import { afterAll, describe, expect, it } from "vitest";
import { createApiEngine } from "../api-engine/index.js";
import { ChatLogCorruptError, ChatStoreWriteError, TranscriptCorruptError } from "../errors.js";
import type { ChatMessage } from "../messages.js";
import { createProvider } from "../providers/create-provider.js";
import { asideCopiesKept, createFileChatStore } from "./file-store.node.js";
import { sampleLog } from "./testing/fixtures.js";
import { buildTranscriptFile } from "./transcript-file.js";

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function temporaryRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "conch-repair-"));
  roots.push(root);
  return root;
}

const line = (message: ChatMessage) => `${JSON.stringify(message)}\n`;
const said = (seq: number, text: string): ChatMessage => ({ seq, role: "user", parts: [{ type: "text", text }] });

describe("createFileChatStore, given a log with a seq written twice (two writers at once)", () => {
  it("should keep a different message under the next seq, drop a byte-for-byte copy, say which, and go on", async () => {
    const root = await temporaryRoot();
    const log = sampleLog().slice(0, 3);
    // Writer A wrote seq 3 and 4; writer B wrote its own seq 3 between them, then a copy of A's seq 3 line.
    const lines = [
      ...log.map(line),
      line(said(3, "from A")),
      line(said(3, "from B")),
      line(said(4, "A again")),
      line(said(3, "from A")),
    ];
    const original = lines.join("");
    await mkdir(join(root, "chats"), { recursive: true });
    await writeFile(join(root, "chats", "dup.jsonl"), original);

    const store = createFileChatStore({ root });
    const error = await store.readLog("dup").catch((caught: unknown) => caught);
    expect(ChatLogCorruptError.isInstance(error)).toBe(true);
    if (!ChatLogCorruptError.isInstance(error)) return;
    expect(error).toMatchObject({ torn: false, repaired: true, line: 5, keptMessages: 6 });
    expect(error.reason).toContain("line 5: 3 → 4");
    expect(error.reason).toContain("line 6: 4 → 5");
    expect(error.reason).toContain("line 7 = line 4");
    expect(error.keptAt).toMatch(/dup\.jsonl\.repaired-\d+-[0-9a-f]+$/);
    expect(await readFile(error.keptAt, "utf8")).toBe(original);

    const repaired = [...log, said(3, "from A"), said(4, "from B"), said(5, "A again")];
    expect(await store.readLog("dup")).toEqual(repaired);
    // Lines not renumbered are kept byte for byte.
    expect((await readFile(store.logPath("dup"), "utf8")).startsWith(lines.slice(0, 4).join(""))).toBe(true);
    await store.appendLog("dup", [said(6, "and on")]);
    expect(await createFileChatStore({ root }).readLog("dup")).toEqual([...repaired, said(6, "and on")]);
  });

  it("should repair a duplicate and a torn last line together", async () => {
    const root = await temporaryRoot();
    await mkdir(join(root, "chats"), { recursive: true });
    await writeFile(
      join(root, "chats", "both.jsonl"),
      `${line(said(0, "a"))}${line(said(0, "b"))}${JSON.stringify(said(1, "c")).slice(0, 12)}`,
    );
    const store = createFileChatStore({ root });
    const error = await store.readLog("both").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ChatLogCorruptError", torn: true, repaired: true, keptMessages: 2 });
    expect(await store.readLog("both")).toEqual([said(0, "a"), said(1, "b")]);
  });
});

describe("createFileChatStore, reading a log as a stream (fault 10)", () => {
  it("should read a log many times longer than its line limit, and append to it", async () => {
    const root = await temporaryRoot();
    const store = createFileChatStore({ root, maxLogLineBytes: 1024 });
    const messages = Array.from({ length: 2_000 }, (_, seq) => said(seq, `message ${seq} ${"é🐚".repeat(100)}`));
    await store.appendLog("long", messages);
    const bytes = (await readFile(store.logPath("long"))).length;
    expect(bytes).toBeGreaterThan(1024 * 1024);
    const fresh = createFileChatStore({ root, maxLogLineBytes: 1024 });
    expect(await fresh.readLog("long")).toEqual(messages);
    await fresh.appendLog("long", [said(2_000, "next")]);
    expect((await createFileChatStore({ root }).readLog("long")).at(-1)).toEqual(said(2_000, "next"));
  });

  it("should report a line over the limit with the limit and its real line on every read over it, and change nothing", async () => {
    const root = await temporaryRoot();
    const store = createFileChatStore({ root });
    await store.appendLog("big", [said(0, "short"), said(1, "x".repeat(5_000)), said(2, "after")]);
    const before = await readFile(store.logPath("big"));
    const limited = createFileChatStore({ root, maxLogLineBytes: 4_096 });
    for (const attempt of [() => limited.readLog("big"), () => limited.readChat("big", { page: { limit: 3 } })]) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(ChatLogCorruptError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ line: 2, torn: false, repaired: false, keptMessages: 1 });
      const size = Buffer.byteLength(JSON.stringify(said(1, "x".repeat(5_000))));
      expect((error as ChatLogCorruptError).reason).toBe(
        `the line is ${size.toLocaleString("en")} bytes, over the longest log line read: 4,096 bytes`,
      );
    }
    expect(await readFile(store.logPath("big"))).toEqual(before);
  });

  it("should report a line that is not UTF-8 at its own line", async () => {
    const root = await temporaryRoot();
    const store = createFileChatStore({ root, maxLogLineBytes: 64 * 1024 });
    await store.appendLog("bad", [said(0, "a"), said(1, "b")]);
    const bytes = await readFile(store.logPath("bad"));
    await writeFile(store.logPath("bad"), Buffer.concat([bytes, Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a])]));
    const error = await createFileChatStore({ root })
      .readLog("bad")
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ChatLogCorruptError", line: 3, reason: "the line is not UTF-8" });
  });
});

describe("createFileChatStore, what crashes and corrupt files leave", () => {
  it("should remove temporary files of other processes when it takes the folder, and nothing else", async () => {
    const root = await temporaryRoot();
    await mkdir(join(root, "api-sessions"), { recursive: true });
    await mkdir(join(root, "chats"), { recursive: true });
    await writeFile(join(root, "api-sessions", "t.json.tmp-999999-abcdef"), '{"version":1');
    await writeFile(join(root, "chats", "t.jsonl.tmp-999998-0123ab"), "{}\n");
    await writeFile(join(root, "api-sessions", "t.json.tmp-notes"), "a person's own file");
    const store = createFileChatStore({ root });
    expect(await store.readTranscript("t")).toBeNull();
    expect(await readdir(join(root, "api-sessions"))).toEqual(["t.json.tmp-notes"]);
    expect(await readdir(join(root, "chats"))).toEqual([]);
  });

  it(`should keep the newest ${asideCopiesKept} copies of a corrupt transcript and remove older ones`, async () => {
    const root = await temporaryRoot();
    const store = createFileChatStore({ root });
    const kept: string[] = [];
    for (let round = 0; round < asideCopiesKept + 3; round++) {
      await mkdir(join(root, "api-sessions"), { recursive: true });
      await writeFile(store.transcriptPath("c"), `not json ${round}`);
      const error = await store.readTranscript("c").catch((caught: unknown) => caught);
      expect(TranscriptCorruptError.isInstance(error)).toBe(true);
      kept.push((error as TranscriptCorruptError).keptAt);
      // Distinct milliseconds, so "newest" is well defined.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const names = (await readdir(join(root, "api-sessions"))).sort();
    expect(names).toEqual(
      kept
        .slice(-asideCopiesKept)
        .map((path) => path.split("/").at(-1) as string)
        .sort(),
    );
    const newest = kept.at(-1) as string;
    expect(await readFile(newest, "utf8")).toBe(`not json ${asideCopiesKept + 2}`);
  });
});

describe("createFileChatStore, given a file system that refuses a write", () => {
  it("should throw ChatStoreWriteError naming the file, never the raw error, and keep what was stored", async () => {
    const root = await temporaryRoot();
    const store = createFileChatStore({ root });
    await store.appendLog("ok", [said(0, "kept")]);
    // A file where the transcripts' folder should be, and a log that points into a folder that is not there.
    await writeFile(join(root, "api-sessions"), "not a folder");
    await symlink(join(root, "nowhere", "dir.jsonl"), join(root, "chats", "dir.jsonl"));
    const attempts = [
      [() => store.writeTranscript("ok", buildTranscriptFile({ id: "ok", kept: [said(0, "kept")] })), "ok.json"],
      [() => store.appendLog("dir", [said(0, "lost?")]), "dir.jsonl"],
    ] as const;
    for (const [attempt, file] of attempts) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(ChatStoreWriteError.isInstance(error), String(error)).toBe(true);
      expect((error as ChatStoreWriteError).location.endsWith(file)).toBe(true);
      expect(error).toMatchObject({ quotaExceeded: false });
      expect((error as ChatStoreWriteError).cause).toHaveProperty("code");
    }
    expect(await store.readLog("ok")).toEqual([said(0, "kept")]);
  });
});

describe("the API engine on a file store whose log has a seq written twice", () => {
  it("should load the chat with every message, say in a health note what was repaired, and go on", async () => {
    const root = await temporaryRoot();
    await mkdir(join(root, "chats"), { recursive: true });
    await writeFile(
      join(root, "chats", "c.jsonl"),
      [said(0, "first"), said(1, "from one tab"), said(1, "from another")].map(line).join(""),
    );
    const server = await startFakeProvider({
      dialect: "openai",
      models: [{ id: "chat", window: 32_000 }],
      countTokens: (text) => Math.ceil(text.length / 4),
      reply: () => ({ text: "Both read." }),
    });
    try {
      const provider = createProvider("openai", { baseURL: server.baseURL, local: false });
      const engine = createApiEngine({ provider, model: "chat", store: createFileChatStore({ root }) });
      const chat = await engine.loadChat("c");
      expect(chat.messages.map((message) => message.parts[0])).toEqual([
        { type: "text", text: "first" },
        { type: "text", text: "from one tab" },
        { type: "text", text: "from another" },
      ]);
      expect(chat.messages.map((message) => message.seq)).toEqual([0, 1, 2]);
      expect(chat.healthNotes.map((note) => note.text)).toEqual([
        expect.stringMatching(
          /^The chat's log was repaired \(1 message carrying a seq .*line 3: 1 → 2.*\); a copy was kept at /,
        ),
      ]);
      const events = [];
      for await (const event of engine.sendTurn({ chatId: "c", seq: 3, text: "and now?" })) events.push(event);
      expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    } finally {
      await server.close();
    }
  });
});
