import type { ChatMessage } from "@conch/engine-client";
import { describe, expect, it } from "vitest";
import { seqOfThreadMessageId, threadMessageId, toBranchableThreadMessages, toThreadMessages } from "./convert.js";

const log: ChatMessage[] = [
  { seq: 0, role: "user", parts: [{ type: "text", text: "Weather in Oslo?" }], createdAt: 1_000 },
  {
    seq: 1,
    role: "assistant",
    parts: [
      { type: "thinking", text: "Ask the tool." },
      { type: "thinking", text: "", redacted: true },
      { type: "tool-call", id: "call-1", name: "weather", arguments: '{"city":"Oslo"}' },
    ],
  },
  { seq: 2, role: "tool", parts: [{ type: "tool-result", callId: "call-1", text: "4 °C", isError: false }] },
  { seq: 3, role: "assistant", parts: [{ type: "text", text: "It is 4 °C." }] },
  { seq: 4, role: "user", parts: [{ type: "picture", name: "map.png", mediaType: "image/png", data: "AAAA" }] },
];

describe("toThreadMessages", () => {
  it("should keep each message's seq in its id and metadata, and mark the folded ones", () => {
    const thread = toThreadMessages(log, { firstKeptSeq: 3, streaming: null });
    expect(thread.map((message) => message.id)).toEqual(["nacre-0", "nacre-1", "nacre-3", "nacre-4"]);
    expect(thread.map((message) => message.metadata?.custom)).toEqual([
      { nacreSeq: 0, nacreFolded: true },
      { nacreSeq: 1, nacreFolded: true },
      { nacreSeq: 3, nacreFolded: false },
      { nacreSeq: 4, nacreFolded: false },
    ]);
    expect(thread[0]?.createdAt).toEqual(new Date(1_000));
  });

  it("should show a tool message as the result on the call it answers, and no redacted reasoning", () => {
    const [, call] = toThreadMessages(log, { firstKeptSeq: null, streaming: null });
    expect(call?.content).toEqual([
      { type: "reasoning", text: "Ask the tool." },
      {
        type: "tool-call",
        toolCallId: "call-1",
        toolName: "weather",
        argsText: '{"city":"Oslo"}',
        result: "4 °C",
        isError: false,
      },
    ]);
    expect(call?.status).toEqual({ type: "complete", reason: "stop" });
  });

  it("should show a reply cut off at the output limit as incomplete for length, and a stopped one as cancelled", () => {
    const ended: ChatMessage[] = [
      { seq: 0, role: "user", parts: [{ type: "text", text: "Count" }] },
      { seq: 1, role: "assistant", parts: [{ type: "text", text: "One, two," }], finishReason: "length" },
      { seq: 2, role: "user", parts: [{ type: "text", text: "Continue" }], continuation: true },
      { seq: 3, role: "assistant", parts: [{ type: "text", text: "three, fo" }], finishReason: "aborted" },
      { seq: 4, role: "assistant", parts: [{ type: "text", text: "four." }], finishReason: "stop" },
    ];
    expect(toThreadMessages(ended, { firstKeptSeq: null, streaming: null }).map((message) => message.status)).toEqual([
      undefined,
      { type: "incomplete", reason: "length" },
      undefined,
      { type: "incomplete", reason: "cancelled" },
      { type: "complete", reason: "stop" },
    ]);
  });

  it("should mark the last message as waiting for the host when a call has no result", () => {
    const thread = toThreadMessages(log.slice(0, 2), { firstKeptSeq: null, streaming: null });
    expect(thread.at(-1)?.status).toEqual({ type: "requires-action", reason: "tool-calls" });
  });

  it("should show a picture as an image, and the message being written last, running, until the log has it", () => {
    const streaming = { seq: 5, text: "Here", thinking: "", toolCalls: [], done: false };
    const thread = toThreadMessages(log, { firstKeptSeq: null, streaming });
    expect(thread.at(-2)?.content).toEqual([
      { type: "image", image: "data:image/png;base64,AAAA", filename: "map.png" },
    ]);
    expect(thread.at(-1)).toMatchObject({
      id: "nacre-5",
      role: "assistant",
      content: [{ type: "text", text: "Here" }],
      status: { type: "running" },
    });
    const logged: ChatMessage = { seq: 5, role: "assistant", parts: [{ type: "text", text: "Here it is." }] };
    const after = toThreadMessages([...log, logged], { firstKeptSeq: null, streaming: { ...streaming, done: true } });
    expect(after.filter((message) => message.id === "nacre-5")).toHaveLength(1);
    expect(after.at(-1)?.content).toEqual([{ type: "text", text: "Here it is." }]);
  });

  it("should read a seq back from a thread message id, and nothing from another id", () => {
    expect(seqOfThreadMessageId(threadMessageId(42))).toBe(42);
    expect(seqOfThreadMessageId("optimistic-1")).toBeNull();
  });
});

describe("toBranchableThreadMessages", () => {
  it("should put each message after the one before it, and its other versions beside it in seq order, empty", () => {
    const thread = toThreadMessages(
      [
        { seq: 0, role: "user", parts: [{ type: "text", text: "one" }] },
        { seq: 7, role: "assistant", parts: [{ type: "text", text: "the third answer" }] },
      ],
      { firstKeptSeq: null, streaming: null },
    );
    const items = toBranchableThreadMessages(thread, (seq) => (seq === 7 ? [1, 4, 7] : undefined));
    expect(items.map(({ message, parentId }) => [message.id, parentId])).toEqual([
      ["nacre-0", null],
      ["nacre-1", "nacre-0"],
      ["nacre-4", "nacre-0"],
      ["nacre-7", "nacre-0"],
    ]);
    expect(items[1]?.message).toMatchObject({ role: "assistant", content: [], metadata: { custom: { nacreSeq: 1 } } });
    expect(items[3]?.message).toBe(thread[1]);
  });
});
