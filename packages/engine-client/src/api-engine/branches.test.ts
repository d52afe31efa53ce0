import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createReplayScript,
  type FakeChatRequest,
  type FakeProvider,
  type FakeReplySource,
  loadConversationFile,
  recordedTurns,
  replayTurns,
  scriptedSummaryReply,
  startFakeProvider,
} from "@conch/fake-provider";
import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import type { BranchCapability, Engine, TurnInput } from "../engine.js";
import { hasBranches } from "../engine.js";
import { createMemoryLearner } from "../learning/memory-learner.js";
import { type ChatMessage, messageText } from "../messages.js";
import { createProvider } from "../providers/create-provider.js";
import type { ChatStore } from "../transcript/chat-store.js";
import { createFileChatStore } from "../transcript/file-store.node.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { type ApiEngineOptions, createApiEngine } from "./api-engine.js";

// Folds per branch (#33): a branch forking before, at or after a fold point is sent, request by request, what a
// linear chat of that branch alone is sent, and never more than the window, with the server counting every request
// with a real tokenizer (o200k).

const servers: FakeProvider[] = [];
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

const window = 4_000;

/** The model's answer depends only on the person's last words: the same chat gets the same answers. */
function reply(request: FakeChatRequest) {
  if (request.model === "cheap") return scriptedSummaryReply(request);
  const asked = request.lastUserText.slice(0, 24);
  return { text: `About "${asked}": ${"here is a careful answer with details ".repeat(18)}` };
}

async function engineOverFakeProvider(
  store: ChatStore = createMemoryChatStore(),
  replySource: FakeReplySource = reply,
  extra: Partial<ApiEngineOptions> = {},
) {
  const server = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: [
      { id: "chat", window },
      { id: "cheap", window: 128_000 },
    ],
    countTokens: (text) => countTokens(text),
    reply: replySource,
  });
  servers.push(server);
  const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
  /** Another engine over the same store and provider (as a server builds one per request). */
  const another = () =>
    createApiEngine({
      provider,
      model: "chat",
      store,
      systemPrompt: "You are a helpful assistant.",
      // Folds happen in the turn that needs them, so two chats fold at the same turns.
      foldAhead: false,
      now: () => 1_000,
      ...extra,
    });
  const engine = another();
  if (!hasBranches(engine)) throw new Error("the API engine declares branches");
  return { server, engine, branches: engine.capabilities.branches as BranchCapability, another };
}

const question = (index: number) => `Question ${index}: ${"please explain the next step in detail ".repeat(14)}`;

/** The chat model's requests from the `from`-th on, as sent. */
function chatBodies(server: FakeProvider, from = 0): unknown[] {
  return server
    .chatRequests()
    .filter((request) => request.model === "chat")
    .slice(from)
    .map((request) => request.body);
}

async function send(engine: Engine, input: TurnInput): Promise<void> {
  const end = await engine.sendTurn(input).done;
  expect(end.status).toBe("done");
}

describe("folds per branch, against a real tokenizer", () => {
  it.each([
    ["before", -4],
    ["at", 0],
    ["after", 4],
  ] as const)(
    "a branch forking %s a fold point is sent what a linear chat of that branch alone is sent",
    async (_where, offset) => {
      // The chat as it went: ten turns, folding on the way.
      const { server, engine } = await engineOverFakeProvider();
      for (let turn = 0; turn < 10; turn++) await send(engine, { chatId: "b", seq: turn * 2, text: question(turn) });
      const folded = await engine.loadChat("b");
      const foldPoint = folded.summary?.firstKeptSeq ?? 0;
      expect(foldPoint).toBeGreaterThan(4);
      // The person edits the person's message whose parent lies `offset` from the fold point's (an even seq).
      const edited = Math.max(2, foldPoint + offset - (foldPoint % 2));
      const sentBefore = chatBodies(server).length;
      await send(engine, { chatId: "b", seq: 20, parent: edited - 1, text: "Edited: let us take another way" });
      for (let turn = 0; turn < 4; turn++)
        await send(engine, { chatId: "b", seq: 22 + turn * 2, text: question(20 + turn) });
      const branched = chatBodies(server, sentBefore);
      // After the fold was made, the branch shares it; before (or at its point, before it was made), it reads its own
      // history, and is folded for itself once it must be.
      const summarised = branched.map((body) => JSON.stringify(body).includes("<earlier-in-this-chat>"));
      expect(summarised[0]).toBe(offset > 0);
      expect(summarised.at(-1)).toBe(true);

      // The same branch, played as a linear chat from its first turn.
      const linear = await engineOverFakeProvider();
      for (let turn = 0; turn < edited / 2; turn++)
        await send(linear.engine, { chatId: "l", seq: turn * 2, text: question(turn) });
      const linearBefore = chatBodies(linear.server).length;
      await send(linear.engine, { chatId: "l", seq: edited, text: "Edited: let us take another way" });
      for (let turn = 0; turn < 4; turn++)
        await send(linear.engine, { chatId: "l", seq: edited + 2 + turn * 2, text: question(20 + turn) });
      expect(branched).toEqual(chatBodies(linear.server, linearBefore));
      // Nothing over the window, on either.
      for (const request of [...server.chatRequests(), ...linear.server.chatRequests()]) {
        if (request.model === "chat") expect(countTokens(JSON.stringify(request.body))).toBeLessThanOrEqual(window);
      }
      // Every version is still there: the first branch, whole, a switch away.
      const first = await (
        engine.capabilities.branches as NonNullable<Engine["capabilities"]["branches"]>
      ).selectBranch("b", 19);
      expect(first.messages.map((message) => message.seq)).toEqual(Array.from({ length: 20 }, (_, seq) => seq));
      expect(first.summary?.firstKeptSeq).toBe(foldPoint);
    },
  );
});

describe("what a switch costs the provider's prompt cache", () => {
  /** The messages of a request body, each as its JSON (what a prefix cache compares). */
  const messagesOf = (body: unknown) =>
    ((body as { messages?: unknown[] }).messages ?? []).map((message) => JSON.stringify(message));
  /** Tokens of a request's messages that no earlier request began with: what a prefix cache cannot serve. */
  function uncached(body: unknown, earlier: readonly unknown[]): number {
    const messages = messagesOf(body);
    let shared = 0;
    for (const previous of earlier) {
      const other = messagesOf(previous);
      let index = 0;
      while (index < Math.min(messages.length, other.length) && messages[index] === other[index]) index++;
      shared = Math.max(shared, index);
    }
    return countTokens(messages.slice(shared).join(""));
  }

  it("should cost at most one full request of uncached input: after the switch each request begins with the one before", async () => {
    const { server, engine, branches } = await engineOverFakeProvider();
    for (let turn = 0; turn < 4; turn++) await send(engine, { chatId: "s", seq: turn * 2, text: question(turn) });
    // Another version of the 2nd person's message, taken on for two turns.
    await send(engine, { chatId: "s", seq: 8, parent: 1, text: "Edited: let us take another way" });
    await send(engine, { chatId: "s", seq: 10, text: question(10) });
    const beforeSwitch = chatBodies(server).length;
    await branches.selectBranch("s", 7);
    for (let turn = 0; turn < 3; turn++)
      await send(engine, { chatId: "s", seq: 12 + turn * 2, text: question(20 + turn) });
    const all = chatBodies(server);
    const after = all.slice(beforeSwitch);
    expect(after).toHaveLength(3);
    // The first request after the switch may be served from the old branch's prefix or not at all: at most one full
    // request. Each one after it begins with the request before it, so only its new turn is uncached, as in a chat
    // that never branched.
    const firstCost = uncached(after[0], all.slice(0, beforeSwitch));
    expect(firstCost).toBeLessThanOrEqual(countTokens(messagesOf(after[0]).join("")));
    for (let index = 1; index < after.length; index++) {
      const previous = messagesOf(after[index - 1]);
      expect(messagesOf(after[index]).slice(0, previous.length)).toEqual(previous);
    }
    // Here the old branch's last request is a prefix of the first after the switch: the switch costs nothing extra.
    const lastOnBranch = messagesOf(all[beforeSwitch - 3]);
    expect(messagesOf(after[0]).slice(0, lastOnBranch.length)).toEqual(lastOnBranch);
  });
});

describe("a crash mid-edit on the file store", () => {
  /** A folded chat of ten turns on disk, and the edit of its 6th person's message as the engine appends it. */
  async function editOnDisk() {
    const root = await mkdtemp(join(tmpdir(), "branch-crash-"));
    folders.push(root);
    const { engine } = await engineOverFakeProvider(createFileChatStore({ root }));
    for (let turn = 0; turn < 10; turn++) await send(engine, { chatId: "c", seq: turn * 2, text: question(turn) });
    const before = await engine.loadChat("c");
    const edit: ChatMessage = {
      seq: 20,
      role: "user",
      parts: [{ type: "text", text: "Edited: let us take another way" }],
      createdAt: 2_000,
      parent: 9,
    };
    return { root, before, edit };
  }

  it("should lose nothing when the process dies after the edit is in the log, before any transcript is written", async () => {
    const { root, before, edit } = await editOnDisk();
    // What the engine writes first, and all it wrote before the crash.
    await createFileChatStore({ root }).appendLog("c", [edit]);
    const { engine, branches } = await engineOverFakeProvider(createFileChatStore({ root }));
    const after = await engine.loadChat("c");
    expect(after.messages.map((message) => message.seq)).toEqual([...Array.from({ length: 10 }, (_, seq) => seq), 20]);
    expect(after.messages.at(-1)).toMatchObject({ seq: 20, parent: 9, siblings: [10, 20] });
    expect(after).toMatchObject({ nextSeq: 21, activeLeaf: 20 });
    // The edit is answered as a turn that failed would be: again.
    await send(engine, { chatId: "c", seq: 20, text: "", retry: true });
    expect((await engine.loadChat("c")).messages.map((message) => message.seq).slice(-2)).toEqual([20, 21]);
    // The first branch is whole, with its fold.
    const first = await branches.selectBranch("c", 19);
    expect(first.messages.map((message) => [message.seq, messageText(message)])).toEqual(
      before.messages.map((message) => [message.seq, messageText(message)]),
    );
    expect(first.summary).toEqual(before.summary);
    expect(await createFileChatStore({ root }).readLog("c")).toHaveLength(22);
  });

  it("should read the chat as before the edit when the process died writing its line, the torn line kept aside", async () => {
    const { root, before, edit } = await editOnDisk();
    const store = createFileChatStore({ root });
    const line = JSON.stringify(edit);
    await appendFile(store.logPath("c"), line.slice(0, line.length >> 1));
    const { engine } = await engineOverFakeProvider(createFileChatStore({ root }));
    const after = await engine.loadChat("c");
    expect(after.messages.map((message) => message.seq)).toEqual(before.messages.map((message) => message.seq));
    expect(after).toMatchObject({ nextSeq: 20, activeLeaf: 19 });
    expect(after.healthNotes.map((note) => note.kind)).toContain("log-repaired");
    // The edit sent again goes where it went.
    await send(engine, { chatId: "c", seq: 20, parent: 9, text: "Edited: let us take another way" });
    expect((await engine.loadChat("c")).messages.map((message) => message.seq)).toEqual([
      ...Array.from({ length: 10 }, (_, seq) => seq),
      20,
      21,
    ]);
  });
});

describe("today's files, read as one branch", () => {
  it("should read a recorded chat whose transcript predates branches as one branch, and send the next turn byte for byte as before", async () => {
    // 12 turns of a real agent session (tool rounds included), played and folded at a 4,000-token window.
    const conversation = loadConversationFile("minsky-specstory.jsonl")[0];
    const turns = recordedTurns(conversation?.messages ?? []).slice(0, 12);
    const recorded = await mkdtemp(join(tmpdir(), "branch-today-"));
    const today = await mkdtemp(join(tmpdir(), "branch-today-"));
    folders.push(recorded, today);
    const script = createReplayScript(["cheap"]);
    const played = await engineOverFakeProvider(createFileChatStore({ root: recorded }), script.reply);
    const stats = await replayTurns(played.engine, "m", turns, script);
    expect(stats.problems).toBe(0);
    expect(stats.folds).toBeGreaterThan(0);
    // Today's files: the same log (no message has a parent), and the transcript without the record of the tree.
    await cp(recorded, today, { recursive: true });
    const transcriptPath = join(today, "api-sessions", "m.json");
    const { branches, ...file } = JSON.parse(await readFile(transcriptPath, "utf8")) as Record<string, unknown>;
    expect(branches).toMatchObject({ forks: [] });
    await writeFile(transcriptPath, JSON.stringify(file));
    const log = await createFileChatStore({ root: today }).readLog("m");
    expect(log.every((message) => message.parent === undefined)).toBe(true);

    const next = { text: "The next answer." };
    const snapshots = [];
    const requests = [];
    for (const root of [recorded, today]) {
      const nextScript = createReplayScript(["cheap"]);
      const { engine, server } = await engineOverFakeProvider(createFileChatStore({ root }), nextScript.reply);
      const chat = await engine.loadChat("m");
      snapshots.push(chat);
      nextScript.queue.push(next);
      await send(engine, { chatId: "m", seq: log.length, text: "And now, the tests?" });
      requests.push(chatBodies(server));
    }
    const [withRecord, withoutRecord] = snapshots;
    expect(withoutRecord?.messages).toEqual(withRecord?.messages);
    expect(withoutRecord?.messages.some((message) => message.siblings !== undefined)).toBe(false);
    expect(withoutRecord).toMatchObject({ nextSeq: log.length, activeLeaf: log.length - 1 });
    expect(withoutRecord?.summary).toEqual(withRecord?.summary);
    expect(requests[1]).toEqual(requests[0]);
    // Written again, the file records the tree: one branch, through the log's end.
    const migrated = JSON.parse(await readFile(transcriptPath, "utf8")) as { branches?: unknown };
    expect(migrated.branches).toMatchObject({ forks: [], through: log.length + 2, activeLeaf: log.length + 1 });
  });
});

describe("learning per branch", () => {
  it("should give the learner each branch's words before its folds once: none repeated where branches share, none skipped on a branch taken up again", async () => {
    const learner = createMemoryLearner();
    const { engine, branches } = await engineOverFakeProvider(createMemoryChatStore(), reply, { learner });
    let seq = 0;
    const turn = async (text: string) => {
      await send(engine, { chatId: "l", seq, text });
      seq = (await engine.loadChat("l")).nextSeq ?? 0;
    };
    for (let index = 0; index < 10; index++) await turn(question(index));
    // A branch forking early (an edit of the 3rd person's message), taken far enough to fold for itself.
    await send(engine, { chatId: "l", seq, parent: 3, text: "Edited: let us take another way" });
    seq += 2;
    for (let index = 10; index < 18; index++) await turn(question(index));
    const second = await engine.loadChat("l");
    // The first branch, taken up again and on until it folds further.
    await branches.selectBranch("l", 19);
    seq = second.nextSeq ?? 0;
    for (let index = 18; index < 26; index++) await turn(question(index));
    const first = await engine.loadChat("l");
    const reviewed = () => learner.reviews.flatMap((review) => review.words.map((words) => words.seq));
    const folded = (chat: typeof first) =>
      chat.messages.filter((message) => message.role === "user" && message.seq < (chat.summary?.firstKeptSeq ?? 0));
    const expected = [...folded(first), ...folded(second)].map((message) => message.seq);
    expect(folded(second).length).toBeGreaterThan(0);
    expect(folded(first).some((message) => message.seq > 19)).toBe(true);
    await expect.poll(() => expected.every((wanted) => reviewed().includes(wanted))).toBe(true);
    // Each word once, and only the branches' own.
    expect(new Set(reviewed()).size).toBe(reviewed().length);
    expect(reviewed().every((words) => expected.includes(words))).toBe(true);
  });
});

describe("any sequence of sends, edits, regenerates and switches through the engine", () => {
  type Step = { readonly kind: "send" } | { readonly kind: "edit" | "regenerate" | "switch"; readonly pick: number };
  const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
    fc.constant({ kind: "send" } as const),
    fc.record({ kind: fc.constantFrom("edit" as const, "regenerate" as const, "switch" as const), pick: fc.nat() }),
  );

  it("should keep every message reachable and show the active branch as a path, the same to another engine", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 1, maxLength: 10 }), async (steps) => {
        const store = createMemoryChatStore();
        const { engine, branches } = await engineOverFakeProvider(store);
        let written = 0;
        for (const [index, step] of steps.entries()) {
          const chat = await engine.loadChat("p");
          const nextSeq = chat.nextSeq ?? 0;
          const people = chat.messages.filter((message) => message.role === "user");
          const pick = "pick" in step ? step.pick : 0;
          if (step.kind === "send" || people.length === 0) {
            await send(engine, { chatId: "p", seq: nextSeq, text: `Message ${index}` });
            written += 2;
          } else if (step.kind === "edit") {
            const edited = people[pick % people.length] as ChatMessage;
            const parent = edited.parent ?? edited.seq - 1;
            await send(engine, { chatId: "p", seq: nextSeq, parent, text: `Edit ${index}` });
            written += 2;
          } else if (step.kind === "regenerate") {
            const asked = people[pick % people.length] as ChatMessage;
            await send(engine, { chatId: "p", seq: asked.seq, text: "", retry: true });
            written += 1;
          } else {
            await branches.selectBranch("p", pick % nextSeq);
          }
        }
        const log = await store.readLog("p");
        expect(log.map((message) => message.seq)).toEqual(Array.from({ length: written }, (_, seq) => seq));
        const chat = await engine.loadChat("p");
        // The active branch is a path: each message follows the one before it, from the root to the active leaf.
        chat.messages.forEach((message, index) => {
          expect(message.parent ?? message.seq - 1).toBe(index === 0 ? -1 : chat.messages[index - 1]?.seq);
        });
        expect(chat.messages.at(-1)?.seq).toBe(chat.activeLeaf);
        const other = await (await engineOverFakeProvider(store)).engine.loadChat("p");
        expect(other.messages).toEqual(chat.messages);
        // Every message is reachable: selecting it shows a branch through it.
        for (const message of log) {
          const branch = await branches.selectBranch("p", message.seq);
          expect(branch.messages.map((shown) => shown.seq)).toContain(message.seq);
        }
      }),
      { numRuns: 8 },
    );
  });
});

describe("versions of a message", () => {
  it("should count as versions only the children of its parent with its role, reading a child it does not hold", async () => {
    const store = createMemoryChatStore();
    // The first answer failed and the person wrote again: two person's messages in a row.
    await store.appendLog("v", [
      { seq: 0, role: "user", parts: [{ type: "text", text: "Hello?" }], createdAt: 1 },
      { seq: 1, role: "user", parts: [{ type: "text", text: "Anyone?" }], createdAt: 2 },
    ]);
    const { engine } = await engineOverFakeProvider(store);
    // The first is answered again: its answer is no version of the second person's message beside it.
    await send(engine, { chatId: "v", seq: 0, text: "", retry: true });
    const chat = await (await engineOverFakeProvider(store)).engine.loadChat("v");
    expect(chat.messages.map((message) => [message.seq, message.role, message.siblings ?? null])).toEqual([
      [0, "user", null],
      [2, "assistant", null],
    ]);
    expect(chat).toMatchObject({ nextSeq: 3, activeLeaf: 2 });
  });
});

describe("a fold ahead on a branch", () => {
  it("should belong to the branch it began on: a switch away never gives its summary to another branch", async () => {
    const { engine, branches } = await engineOverFakeProvider(createMemoryChatStore(), reply, { foldAhead: true });
    for (let turn = 0; turn < 10; turn++) await send(engine, { chatId: "a", seq: turn * 2, text: question(turn) });
    const first = await engine.loadChat("a");
    // A branch forking early, taken on until a fold ahead of the need begins on it.
    const nextSeq = first.nextSeq ?? 0;
    let begun = false;
    engine.subscribe((event) => {
      if (event.type === "compacting" && event.chatId === "a") begun = true;
    });
    let seq = nextSeq;
    await send(engine, { chatId: "a", seq, parent: 1, text: "Edited: let us take another way" });
    seq += 2;
    // Turns on the new branch until a fold ahead of the need begins on it (a fold comes once the branch passes its
    // budget: how many turns that takes is the fold rule's, not this test's).
    for (let turn = 10; !begun && turn < 60; turn++) {
      await send(engine, { chatId: "a", seq, text: question(turn) });
      seq += 2;
    }
    expect(begun).toBe(true);
    // Switched away at once: the first branch keeps its own fold, whatever the fold ahead did on the other.
    const back = await branches.selectBranch("a", 19);
    expect(back.summary).toEqual(first.summary);
    expect(back.messages.map((message) => message.seq)).toEqual(first.messages.map((message) => message.seq));
    // And the other branch never took the first's: its own summary, of its own words, or none.
    const other = await branches.selectBranch("a", nextSeq);
    expect(other.summary?.text ?? "").not.toContain("Question 5");
  });
});

describe("an edit of the 3rd message of a chat folded twice, over an engine per turn", () => {
  /**
   * How the chat begins: `before`, with turns alike (both folds come after the 3rd message); `held`, with a long
   * first message (as a recorded chat's first, pasted, often is), held to the room a first turn has, and folded
   * after the 3rd message; `between`, folded on request after the 2nd turn, so that the first fold comes before.
   */
  type Start = "before" | "held" | "between";
  const firstRepeats: Record<Start, number> = { before: 1, held: 22, between: 1 };
  /** After the 2nd turn of a chat begun `between`, the person folds it (the engine keeps the last turn). */
  async function foldOnRequest(engine: Engine, chatId: string, turn: number, start: Start) {
    if (start !== "between" || turn !== 1) return;
    const folded = await engine.capabilities.context?.compact(chatId);
    expect(folded?.status).toBe("compacted");
  }
  const words = (turn: number, start: Start) => (turn === 0 ? question(0).repeat(firstRepeats[start]) : question(turn));

  /** The chat played until it has folded twice, a new engine over the store for every turn. */
  async function foldedTwice(store: ChatStore, start: Start, extra: Partial<ApiEngineOptions>) {
    const over = await engineOverFakeProvider(store, reply, extra);
    const summaries: string[] = [];
    for (let turn = 0; summaries.length < 2; turn++) {
      expect(turn).toBeLessThan(30);
      const engine = over.another();
      await send(engine, { chatId: "e", seq: turn * 2, text: words(turn, start) });
      await foldOnRequest(engine, "e", turn, start);
      const summary = (await engine.loadChat("e")).summary?.text;
      if (summary !== undefined && summary !== summaries.at(-1)) summaries.push(summary);
    }
    return { ...over, summaries };
  }

  /** What a linear chat of the branch alone is sent for the edited message: its first two turns, then the edit. */
  async function linearRequest(start: Start): Promise<unknown> {
    const linear = await engineOverFakeProvider();
    for (let turn = 0; turn < 2; turn++) {
      await send(linear.engine, { chatId: "l", seq: turn * 2, text: words(turn, start) });
      await foldOnRequest(linear.engine, "l", turn, start);
    }
    await send(linear.engine, { chatId: "l", seq: 4, text: "Edited: let us take another way" });
    return chatBodies(linear.server).at(-1);
  }

  it.each([
    ["memory", "before", false],
    ["file", "before", false],
    ["memory (fold ahead)", "before", true],
    ["file (fold ahead)", "before", true],
    ["memory", "held", false],
    ["file (fold ahead)", "held", true],
    ["memory", "between", false],
    ["file (fold ahead)", "between", true],
  ] as const)("on the %s store, a chat begun %s, it is sent as that branch alone", async (kind, start, ahead) => {
    let store: ChatStore = createMemoryChatStore();
    if (kind.startsWith("file")) {
      const root = await mkdtemp(join(tmpdir(), "branch-engines-"));
      folders.push(root);
      store = createFileChatStore({ root });
    }
    const between = start === "between";
    const { server, another, summaries } = await foldedTwice(store, start, ahead ? { foldAhead: true } : {});
    const sentBefore = chatBodies(server).length;
    const { nextSeq = 0 } = await another().loadChat("e");
    await send(another(), { chatId: "e", seq: nextSeq, parent: 3, text: "Edited: let us take another way" });
    const [afterEdit] = chatBodies(server, sentBefore);
    expect(afterEdit).toEqual(await linearRequest(start));
    // Forking before both folds it reads its own history; between them it shares the first, never the second.
    expect(JSON.stringify(afterEdit).includes("<earlier-in-this-chat>")).toBe(between);
    const chat = await another().loadChat("e");
    expect(chat.summary?.text).toBe(between ? summaries[0] : undefined);
    expect(chat.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, nextSeq, nextSeq + 1]);
  });
});
