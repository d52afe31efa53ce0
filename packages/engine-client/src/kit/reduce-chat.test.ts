import { describe, expect, it } from "vitest";
import type { ChatSnapshot } from "../engine.js";
import type { EngineEvent } from "../events.js";
import { foldedMessageCount, hasSomethingToFold, reduceChat, upsertMessage } from "./reduce-chat.js";
import { nextSeq } from "./turn-open.js";

const model = { id: "m", displayName: "M", context: 8000, ready: true, local: false };

function chat(overrides: Partial<ChatSnapshot> = {}): ChatSnapshot {
  return {
    chatId: "c",
    messages: [
      { seq: 0, role: "user", parts: [{ type: "text", text: "a" }] },
      { seq: 1, role: "assistant", parts: [{ type: "text", text: "b" }] },
    ],
    summary: null,
    healthNotes: [],
    model,
    contextUsage: null,
    problem: null,
    usage: { inputTokens: 1, outputTokens: 2, cachedInputTokens: 0 },
    ...overrides,
  };
}

describe("reduceChat", () => {
  describe("given a chat with branches", () => {
    const text = (value: string) => [{ type: "text" as const, text: value }];
    const tree = () =>
      chat({
        messages: [
          { seq: 0, role: "user", parts: text("a") },
          { seq: 1, role: "assistant", parts: text("b") },
          { seq: 2, role: "user", parts: text("c") },
          { seq: 3, role: "assistant", parts: text("d") },
        ],
        nextSeq: 4,
        activeLeaf: 3,
      });

    it("should show an edit's branch: cut after the message it follows, the new version its leaf", () => {
      const edited = reduceChat(tree(), {
        type: "turn-start",
        chatId: "c",
        message: { seq: 4, role: "user", parent: 1, parts: text("c2") },
      });
      expect(edited.messages.map((message) => message.seq)).toEqual([0, 1, 4]);
      expect(edited).toMatchObject({ nextSeq: 5, activeLeaf: 4 });
      const answered = reduceChat(edited, {
        type: "message-end",
        chatId: "c",
        message: { seq: 5, role: "assistant", parts: text("d2") },
        finishReason: "stop",
      });
      expect(answered.messages.map((message) => message.seq)).toEqual([0, 1, 4, 5]);
      expect(answered).toMatchObject({ nextSeq: 6, activeLeaf: 5 });
    });

    it("should show a regenerate's branch: cut after the person's message it answers again, then the new answer", () => {
      const again = reduceChat(tree(), {
        type: "turn-start",
        chatId: "c",
        message: { seq: 0, role: "user", parts: text("a") },
      });
      expect(again.messages.map((message) => message.seq)).toEqual([0]);
      const answered = reduceChat(again, {
        type: "message-end",
        chatId: "c",
        message: { seq: 4, role: "assistant", parent: 0, parts: text("b2") },
        finishReason: "stop",
      });
      expect(answered.messages.map((message) => message.seq)).toEqual([0, 4]);
      expect(answered.activeLeaf).toBe(4);
    });
  });

  describe("given a turn-start", () => {
    it("should append the person's message and clear the last problem", () => {
      const before = chat({
        problem: { seq: 0, problem: { kind: "offline", title: "Offline", next: { type: "retry" } } },
      });
      const after = reduceChat(before, {
        type: "turn-start",
        chatId: "c",
        message: { seq: 2, role: "user", parts: [{ type: "text", text: "c" }] },
      });
      expect(after.messages.map((message) => message.seq)).toEqual([0, 1, 2]);
      expect(after.problem).toBeNull();
      // Old messages keep their identity, so memoised rows do not re-render.
      expect(after.messages[0]).toBe(before.messages[0]);
    });
  });

  describe("given a compacted event", () => {
    it("should keep the summary state without the event's type and chat id", () => {
      const after = reduceChat(chat(), {
        type: "compacted",
        chatId: "c",
        text: "S",
        model: "small",
        firstKeptSeq: 2,
        reason: "manual",
        before: { messages: 4, tokens: 100 },
        after: { messages: 2, tokens: 40 },
        at: 5,
      });
      expect(after.summary).toEqual({
        text: "S",
        model: "small",
        firstKeptSeq: 2,
        reason: "manual",
        before: { messages: 4, tokens: 100 },
        after: { messages: 2, tokens: 40 },
        at: 5,
      });
    });

    it("should clear a too-long problem (the fold answers it) and keep any other", () => {
      const compacted: EngineEvent = {
        type: "compacted",
        chatId: "c",
        text: "S",
        model: "small",
        firstKeptSeq: 2,
        reason: "manual",
        before: { messages: 4, tokens: 100 },
        after: { messages: 2, tokens: 40 },
        at: 5,
      };
      const tooLong = chat({
        problem: {
          seq: 2,
          problem: { kind: "too-long", title: "Too long", next: { type: "new-chat", message: "c" } },
        },
      });
      expect(reduceChat(tooLong, compacted).problem).toBeNull();
      const offline = chat({
        problem: { seq: 2, problem: { kind: "offline", title: "Offline", next: { type: "retry" } } },
      });
      expect(reduceChat(offline, compacted).problem).toBe(offline.problem);
    });
  });

  describe("given events that the snapshot does not hold", () => {
    it.each<EngineEvent>([
      { type: "text-delta", chatId: "c", seq: 3, delta: "x" },
      { type: "message-start", chatId: "c", seq: 3, role: "assistant" },
      { type: "compacting", chatId: "c", reason: "budget" },
      { type: "healed", chatId: "c", seq: 2, provider: "p", model: "m" },
      { type: "text-delta", chatId: "other", seq: 3, delta: "x" },
    ])("should return the same object for $type", (event) => {
      const before = chat();
      expect(reduceChat(before, event)).toBe(before);
    });
  });

  describe("given a health note seen twice", () => {
    it("should keep it once, newest first", () => {
      const note = { id: "n1", chatId: "c", kind: "healed" as const, text: "t", at: 1 };
      const older = { id: "n0", chatId: "c", kind: "summary-failed" as const, text: "o", at: 0 };
      const once = reduceChat(chat({ healthNotes: [older] }), { type: "health-note", chatId: "c", note });
      const twice = reduceChat(once, { type: "health-note", chatId: "c", note });
      expect(twice.healthNotes.map((n) => n.id)).toEqual(["n1", "n0"]);
      expect(twice).toBe(once);
    });
  });

  describe("given a turn-end", () => {
    it("should add the turn's usage to the chat's", () => {
      const after = reduceChat(chat(), {
        type: "turn-end",
        chatId: "c",
        seq: 2,
        status: "done",
        usage: { inputTokens: 10, outputTokens: 20, cachedInputTokens: 5 },
      });
      expect(after.usage).toEqual({ inputTokens: 11, outputTokens: 22, cachedInputTokens: 5 });
    });
  });
});

describe("upsertMessage", () => {
  it("should replace a message with the same seq and insert one out of order in place", () => {
    const messages = chat().messages;
    const replaced = upsertMessage(messages, { seq: 1, role: "assistant", parts: [{ type: "text", text: "B" }] });
    expect(replaced.map((m) => (m.parts[0]?.type === "text" ? m.parts[0].text : ""))).toEqual(["a", "B"]);
    const inserted = upsertMessage([messages[0]!, { seq: 4, role: "user", parts: [] }], {
      seq: 2,
      role: "user",
      parts: [],
    });
    expect(inserted.map((m) => m.seq)).toEqual([0, 2, 4]);
  });
});

describe("nextSeq, hasSomethingToFold and foldedMessageCount", () => {
  it("should place the next message after the last and start an empty chat at 0", () => {
    expect(nextSeq(chat().messages)).toBe(2);
    expect(nextSeq([])).toBe(0);
  });

  it("should fold only when the newest turn starts after what is already folded", () => {
    expect(hasSomethingToFold(chat())).toBe(false);
    const twoTurns = chat({
      messages: [...chat().messages, { seq: 2, role: "user", parts: [] }, { seq: 3, role: "assistant", parts: [] }],
    });
    expect(hasSomethingToFold(twoTurns)).toBe(true);
    const folded = { ...twoTurns, summary: { ...summaryAt(2) } };
    expect(hasSomethingToFold(folded)).toBe(false);
    expect(foldedMessageCount(folded)).toBe(2);
  });
});

function summaryAt(firstKeptSeq: number) {
  return {
    text: "S",
    model: "small",
    firstKeptSeq,
    reason: "manual" as const,
    before: { messages: 4, tokens: 100 },
    after: { messages: 2, tokens: 40 },
    at: 0,
  };
}
