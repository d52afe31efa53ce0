import { describe, expect, it } from "vitest";
import { hasBranches } from "../engine.js";
import { ChatBusyError, TurnSequenceError } from "../errors.js";
import { messageText } from "../messages.js";
import { createMockChatStore, createMockEngine } from "./mock-engine.js";

const reply = (input: { text: string; retry?: boolean }, call: number) => ({ reply: `answer ${call}: ${input.text}` });

async function chatOfThreeTurns() {
  const engine = createMockEngine({ turns: reply });
  for (const [seq, text] of [
    [0, "one"],
    [2, "two"],
    [4, "three"],
  ] as const) {
    await engine.sendTurn({ chatId: "c", seq, text }).done;
  }
  return engine;
}

function texts(snapshot: { messages: readonly { parts: readonly unknown[] }[] }): string[] {
  return snapshot.messages.map((message) => messageText(message as Parameters<typeof messageText>[0]));
}

describe("createMockEngine with branches", () => {
  it("should declare the branches capability, and leave it out when the script says so", () => {
    expect(hasBranches(createMockEngine())).toBe(true);
    expect(hasBranches(createMockEngine({ branches: false }))).toBe(false);
  });

  describe("given an edit of the second person's message", () => {
    it("should add the new version beside the old one, answer it, and show the new branch with siblings", async () => {
      const engine = await chatOfThreeTurns();
      const end = await engine.sendTurn({ chatId: "c", seq: 6, parent: 1, text: "two, edited" }).done;
      expect(end.status).toBe("done");
      const snapshot = await engine.loadChat("c");
      expect(texts(snapshot)).toEqual(["one", "answer 0: one", "two, edited", "answer 3: two, edited"]);
      expect(snapshot.messages.map((message) => message.seq)).toEqual([0, 1, 6, 7]);
      expect(snapshot.messages[2]).toMatchObject({ parent: 1, siblings: [2, 6] });
      expect(snapshot.messages[3]?.siblings).toBeUndefined();
      expect(snapshot).toMatchObject({ nextSeq: 8, activeLeaf: 7 });
    });

    it("should edit the first message with parent -1 (the root)", async () => {
      const engine = await chatOfThreeTurns();
      await engine.sendTurn({ chatId: "c", seq: 6, parent: -1, text: "one, edited" }).done;
      const snapshot = await engine.loadChat("c");
      expect(snapshot.messages.map((message) => message.seq)).toEqual([6, 7]);
      expect(snapshot.messages[0]?.siblings).toEqual([0, 6]);
    });
  });

  describe("given a regenerate of the first answer", () => {
    it("should answer the person's message again as a new version, the old answer kept", async () => {
      const engine = await chatOfThreeTurns();
      await engine.sendTurn({ chatId: "c", seq: 0, retry: true, text: "" }).done;
      const snapshot = await engine.loadChat("c");
      expect(snapshot.messages.map((message) => message.seq)).toEqual([0, 6]);
      expect(snapshot.messages[1]).toMatchObject({ role: "assistant", parent: 0, siblings: [1, 6] });
      expect(texts(snapshot)[1]).toBe("answer 3: ");
    });

    it("should refuse a retry of a message that is not a person's on the active branch", async () => {
      const engine = await chatOfThreeTurns();
      await engine.sendTurn({ chatId: "c", seq: 6, parent: 1, text: "two, edited" }).done;
      // seq 2 is on the other branch now; seq 1 is an answer.
      for (const seq of [2, 1]) {
        const stream = engine.sendTurn({ chatId: "c", seq, retry: true, text: "" });
        await expect(stream.done).rejects.toSatisfy(TurnSequenceError.isInstance);
      }
    });
  });

  describe("given two versions of a message", () => {
    it("should select either branch, its newest leaf active, and continue it with the next turn", async () => {
      const engine = await chatOfThreeTurns();
      await engine.sendTurn({ chatId: "c", seq: 6, parent: 1, text: "two, edited" }).done;
      const back = await engine.capabilities.branches?.selectBranch("c", 2);
      expect(back?.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(back).toMatchObject({ activeLeaf: 5, nextSeq: 8 });
      expect(back?.messages[2]?.siblings).toEqual([2, 6]);
      await engine.sendTurn({ chatId: "c", seq: 8, text: "four" }).done;
      const after = await engine.loadChat("c");
      expect(after.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5, 8, 9]);
      expect(after.messages[6]).toMatchObject({ parent: 5 });
      const edited = await engine.capabilities.branches?.selectBranch("c", 6);
      expect(edited?.messages.map((message) => message.seq)).toEqual([0, 1, 6, 7]);
    });

    it("should refuse an unknown seq, and a switch while a turn runs", async () => {
      const engine = await chatOfThreeTurns();
      await expect(engine.capabilities.branches?.selectBranch("c", 42)).rejects.toSatisfy(TurnSequenceError.isInstance);
      const slow = createMockEngine({ delayMs: 5 });
      const running = slow.sendTurn({ chatId: "c", seq: 0, text: "hi" });
      await expect(slow.capabilities.branches?.selectBranch("c", 0)).rejects.toSatisfy(ChatBusyError.isInstance);
      await running.done;
    });

    it("should keep the active branch on its store, as a reload reads it", async () => {
      const store = createMockChatStore();
      const engine = createMockEngine({ store, turns: reply });
      await engine.sendTurn({ chatId: "c", seq: 0, text: "one" }).done;
      await engine.sendTurn({ chatId: "c", seq: 2, parent: -1, text: "one, edited" }).done;
      await engine.capabilities.branches?.selectBranch("c", 0);
      const reloaded = await createMockEngine({ store }).loadChat("c");
      expect(reloaded.messages.map((message) => message.seq)).toEqual([0, 1]);
      expect(reloaded.activeLeaf).toBe(1);
    });
  });

  it("should show a seeded tree's newest branch, with siblings", async () => {
    const engine = createMockEngine({
      chats: {
        c: {
          messages: [
            { seq: 0, role: "user", parts: [{ type: "text", text: "one" }] },
            { seq: 1, role: "assistant", parts: [{ type: "text", text: "1" }] },
            { seq: 2, role: "user", parent: -1, parts: [{ type: "text", text: "one, edited" }] },
          ],
        },
      },
    });
    const snapshot = await engine.loadChat("c");
    expect(snapshot.messages.map((message) => message.seq)).toEqual([2]);
    expect(snapshot.messages[0]?.siblings).toEqual([0, 2]);
  });

  describe("given a fold on one branch", () => {
    it("should show the summary on the branches through its first kept message, and none on a branch forking before it", async () => {
      const engine = createMockEngine({
        turns: (input, call) => (call === 2 ? { compaction: { summary: "S", keepTurns: 1 } } : reply(input, call)),
      });
      await engine.sendTurn({ chatId: "c", seq: 0, text: "one" }).done;
      await engine.sendTurn({ chatId: "c", seq: 2, text: "two" }).done;
      await engine.sendTurn({ chatId: "c", seq: 4, text: "three" }).done;
      expect((await engine.loadChat("c")).summary).toMatchObject({ text: "S", firstKeptSeq: 4 });
      // An edit of the second message forks before the fold: that branch reads its own history.
      await engine.sendTurn({ chatId: "c", seq: 6, parent: 1, text: "two, edited" }).done;
      expect((await engine.loadChat("c")).summary).toBeNull();
      // Back on the folded branch, its summary is there again.
      expect((await engine.capabilities.branches?.selectBranch("c", 4))?.summary).toMatchObject({ text: "S" });
    });
  });
});
