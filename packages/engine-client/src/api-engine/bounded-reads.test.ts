import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createReplayScript, type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLearner } from "../learning/memory-learner.js";
import { chatLogFrom } from "../mock/long-chat.js";
import { createProvider } from "../providers/create-provider.js";
import type { ChatStore } from "../transcript/chat-store.js";
import { createFileChatStore } from "../transcript/file-store.node.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { type ApiEngineOptions, createApiEngine } from "./api-engine.js";

const servers: FakeProvider[] = [];
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A store that counts what is read of the log: whole-log reads, and messages read by `readChat`. */
function countingStore(inner: ChatStore) {
  const counts = { wholeLogReads: 0, messagesRead: 0 };
  const store: ChatStore = {
    ...inner,
    readLog(chatId) {
      counts.wholeLogReads += 1;
      return inner.readLog(chatId);
    },
    async readChat(chatId, options) {
      const reading = await inner.readChat(chatId, options);
      const seqs = new Set([...reading.kept, ...reading.page].map((message) => message.seq));
      counts.messagesRead += seqs.size;
      return reading;
    },
  };
  if (inner.writeTurn) store.writeTurn = inner.writeTurn.bind(inner);
  return { store, counts };
}

async function fakeProvider() {
  const script = createReplayScript(["cheap"]);
  const server = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: [
      { id: "chat", window: 8_192 },
      { id: "cheap", window: 128_000, displayName: "Cheap Summariser" },
    ],
    reply: script.reply,
  });
  servers.push(server);
  const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
  return { server, provider, script };
}

/** 2,000 messages that arrived whole (an imported chat), far more than an 8K window holds. */
const imported = chatLogFrom(
  Array.from({ length: 1_000 }, (_, index) => [`Question ${index}: where next?`, `Answer ${index}: go on.`] as const),
);

describe("the API engine on a long chat", () => {
  for (const kind of ["memory", "file"] as const) {
    it(`should read only the kept part for a turn and only the page for loadChat, never the whole log (${kind} store)`, async () => {
      const { provider } = await fakeProvider();
      let inner: ChatStore = createMemoryChatStore();
      if (kind === "file") {
        const root = await mkdtemp(join(tmpdir(), "conch-bounded-"));
        folders.push(root);
        inner = createFileChatStore({ root });
      }
      await inner.appendLog("long", imported);
      const options: Omit<ApiEngineOptions, "store"> = { provider, model: "chat" };
      // The first turn reads the whole log: it arrived without a transcript, and is folded.
      const first = await createApiEngine({ ...options, store: inner }).sendTurn({
        chatId: "long",
        seq: imported.length,
        text: "And now?",
      }).done;
      expect(first.status).toBe("done");
      const kept = (await inner.readTranscript("long"))?.messages.length ?? 0;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(200);

      // A new engine per request, as a server builds: each reads what the window needs.
      const { store, counts } = countingStore(inner);
      const turn = await createApiEngine({ ...options, store }).sendTurn({
        chatId: "long",
        seq: imported.length + 2,
        text: "One more?",
      }).done;
      expect(turn.status).toBe("done");
      expect(counts.wholeLogReads).toBe(0);
      expect(counts.messagesRead).toBeLessThanOrEqual(kept + 2);

      counts.messagesRead = 0;
      const snapshot = await createApiEngine({ ...options, store }).loadChat("long", { page: { limit: 20 } });
      expect(snapshot.messages.map((message) => message.seq)).toEqual(
        Array.from({ length: 20 }, (_, index) => imported.length + 4 - 20 + index),
      );
      expect(snapshot.hasOlder).toBe(true);
      expect(snapshot.summary).not.toBeNull();
      expect(counts.wholeLogReads).toBe(0);
      expect(counts.messagesRead).toBeLessThanOrEqual(kept + 4 + 20);

      const oldest = await createApiEngine({ ...options, store }).loadChat("long", { page: { before: 5, limit: 20 } });
      expect(oldest.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4]);
      expect(oldest.hasOlder).toBe(false);
      // Without a page, the whole log: the person reads it all.
      expect((await createApiEngine({ ...options, store }).loadChat("long")).messages).toHaveLength(
        imported.length + 4,
      );
    });
  }

  it("should read a branch's kept part and page on a switch or an edit, never the whole log (#33)", async () => {
    const { provider, script } = await fakeProvider();
    const inner = createMemoryChatStore();
    await inner.appendLog("long", imported);
    const options: Omit<ApiEngineOptions, "store"> = { provider, model: "chat", foldAhead: false };
    const first = await createApiEngine({ ...options, store: inner }).sendTurn({
      chatId: "long",
      seq: imported.length,
      text: "And now?",
    }).done;
    expect(first.status).toBe("done");
    const kept = (await inner.readTranscript("long"))?.messages.length ?? 0;
    expect(kept).toBeLessThan(200);
    const { store, counts } = countingStore(inner);
    const engine = () => createApiEngine({ ...options, store });
    // An edit far before the fold: the new branch reads its own (short) history.
    script.queue.push({ text: "On the new branch." });
    const edit = await engine().sendTurn({ chatId: "long", seq: imported.length + 2, parent: 9, text: "Edited" }).done;
    expect(edit.status).toBe("done");
    expect(counts.wholeLogReads).toBe(0);
    expect(counts.messagesRead).toBeLessThanOrEqual(kept + 2 + 12);
    // Back to the long branch, by any message on it, and over again: its own fold, its kept part, its page.
    for (const [seq, leaf] of [
      [imported.length, imported.length + 1],
      [11, imported.length + 1],
      [imported.length + 2, imported.length + 3],
    ] as const) {
      counts.messagesRead = 0;
      const branches = engine().capabilities.branches;
      const snapshot = await branches.selectBranch("long", seq, { page: { limit: 20 } });
      expect(snapshot.activeLeaf).toBe(leaf);
      expect(snapshot.messages.at(-1)?.seq).toBe(leaf);
      expect(counts.wholeLogReads).toBe(0);
      expect(counts.messagesRead).toBeLessThanOrEqual(kept + 2 + 20);
    }
  });

  it("should say `compacting` before the summariser's first request, then each piece read, on the first turn of an imported chat", async () => {
    const { provider, server } = await fakeProvider();
    const store = createMemoryChatStore();
    await store.appendLog("imported", imported);
    const engine = createApiEngine({ provider, model: "chat", store });
    const folding: { piece?: number; pieces?: number; summariserRequests: number }[] = [];
    engine.subscribe((event) => {
      if (event.type !== "compacting") return;
      const summariserRequests = server.chatRequests().filter((request) => request.model === "cheap").length;
      folding.push({
        ...(event.piece !== undefined ? { piece: event.piece, pieces: event.pieces } : {}),
        summariserRequests,
      });
    });
    const end = await engine.sendTurn({ chatId: "imported", seq: imported.length, text: "Where were we?" }).done;
    expect(end.status).toBe("done");
    const requests = server.chatRequests().filter((request) => request.model === "cheap").length;
    expect(requests).toBeGreaterThan(1);
    expect(folding[0]).toEqual({ summariserRequests: 0 });
    expect(folding.slice(1)).toEqual(
      Array.from({ length: requests }, (_, index) => ({
        piece: index + 1,
        pieces: requests,
        summariserRequests: index + 1,
      })),
    );
  });

  it("should give the learner the person's words it has not read, from before the kept part too", async () => {
    const { provider } = await fakeProvider();
    const store = createMemoryChatStore();
    await store.appendLog("learn", imported);
    const options: Omit<ApiEngineOptions, "store"> = { provider, model: "chat" };
    // The first fold: no learner yet, so nothing is marked read.
    await createApiEngine({ ...options, store }).sendTurn({ chatId: "learn", seq: imported.length, text: "Hi" }).done;
    const firstKept = (await store.readTranscript("learn"))?.seqs?.[0] ?? 0;
    expect(firstKept).toBeGreaterThan(100);
    // A learner from now on, on a new engine (the kept part only in memory): its first fold reads from seq 0.
    const learner = createMemoryLearner();
    const engine = createApiEngine({ ...options, store, learner });
    await engine.capabilities.context?.compact("learn");
    await expect.poll(() => learner.reviews.length).toBeGreaterThan(0);
    const words = learner.reviews[0]?.words ?? [];
    expect(words[0]?.seq).toBe(0);
    expect(words.filter((word) => word.seq < firstKept)).toHaveLength(firstKept / 2);
  });
});
