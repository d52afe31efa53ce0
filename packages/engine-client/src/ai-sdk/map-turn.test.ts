import { readUIMessageStream as readOnAi7 } from "ai";
import { readUIMessageStream as readOnAi6 } from "ai6";
import { describe, expect, it } from "vitest";
import type { EngineEvent, HealthNote, SummaryState } from "../events.js";
import { textMessage } from "../messages.js";
import type { TurnProblem } from "../problems.js";
import { createTurnChunkMapper, type NacreUIMessageChunk } from "./map-turn.js";
import { nacreTurnRequest, planNacreTurn } from "./plan-turn.js";
import type { NacreUIMessage } from "./ui-message.js";

const chatId = "c";
const usage = { inputTokens: 10, outputTokens: 4, cachedInputTokens: 0 };

type Reader = (options: {
  message?: NacreUIMessage;
  stream: ReadableStream<NacreUIMessageChunk>;
}) => AsyncIterable<NacreUIMessage>;

// The same mapper against each major version's own reader: the one `useChat` runs.
const readers: readonly [string, Reader][] = [
  ["ai 7", readOnAi7 as unknown as Reader],
  ["ai 6", readOnAi6 as unknown as Reader],
];

function chunksOf(events: readonly EngineEvent[], answers?: number): NacreUIMessageChunk[] {
  const mapper = createTurnChunkMapper(answers === undefined ? {} : { answers });
  return [...events.flatMap((event) => mapper.map(event)), ...mapper.end()];
}

function streamOf(chunks: readonly NacreUIMessageChunk[]): ReadableStream<NacreUIMessageChunk> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function lastMessage(read: Reader, chunks: readonly NacreUIMessageChunk[], message?: NacreUIMessage) {
  let last: NacreUIMessage | undefined;
  for await (const snapshot of read({ stream: streamOf(chunks), ...(message ? { message } : {}) })) last = snapshot;
  if (!last) throw new Error("the stream made no message");
  return last;
}

function answer(seq: number, text: string, model = "chat"): EngineEvent[] {
  return [
    { type: "message-start", chatId, seq, role: "assistant", model },
    ...text.split(" ").map(
      (word, index): EngineEvent => ({
        type: "text-delta",
        chatId,
        seq,
        delta: index === 0 ? word : ` ${word}`,
      }),
    ),
    {
      type: "message-end",
      chatId,
      message: textMessage(seq, "assistant", text, { model }),
      finishReason: "stop",
    },
  ];
}

const summary: SummaryState = {
  text: "They planned a trip to Oslo.",
  model: "cheap",
  firstKeptSeq: 4,
  reason: "budget",
  before: { messages: 6, tokens: 9_000 },
  after: { messages: 2, tokens: 900 },
  at: 1_700_000_000_000,
};

describe.each(readers)("the turn mapper read by %s's readUIMessageStream", (_version, read) => {
  it("should keep a fold as one part updated in place, before the answer's text, with seqs and usage", async () => {
    const events: EngineEvent[] = [
      { type: "turn-start", chatId, message: textMessage(6, "user", "And the hotel?") },
      { type: "compacting", chatId, reason: "budget" },
      { type: "compacted", chatId, ...summary },
      ...answer(7, "The hotel is booked."),
      { type: "usage", chatId, usage },
      { type: "turn-end", chatId, seq: 6, status: "done", usage },
    ];
    const chunks = chunksOf(events);
    expect(chunks.filter((chunk) => chunk.type === "data-nacre-fold")).toHaveLength(2);

    const message = await lastMessage(read, chunks);

    expect(message.id).toBe("nacre-answer-6");
    expect(message.role).toBe("assistant");
    expect(message.metadata).toEqual({ seq: 6, lastSeq: 7, model: "chat", finishReason: "stop", usage });
    const folds = message.parts.filter((part) => part.type === "data-nacre-fold");
    expect(folds).toEqual([
      { type: "data-nacre-fold", id: expect.any(String), data: { status: "compacted", reason: "budget", summary } },
    ]);
    expect(message.parts.map((part) => part.type)).toEqual(["data-nacre-fold", "step-start", "text"]);
    expect(message.parts[2]).toMatchObject({ type: "text", text: "The hotel is booked.", state: "done" });
  });

  it("should show a fold's progress in the same part as its start", async () => {
    const chunks = chunksOf([
      { type: "turn-start", chatId, message: textMessage(6, "user", "And the hotel?") },
      { type: "compacting", chatId, reason: "budget" },
      { type: "compacting", chatId, reason: "budget", piece: 1, pieces: 2 },
      { type: "compacting", chatId, reason: "budget", piece: 2, pieces: 2 },
      { type: "compacted", chatId, ...summary },
      ...answer(7, "The hotel is booked."),
      { type: "turn-end", chatId, seq: 6, status: "done", usage },
    ]);
    const folds = chunks.filter((chunk) => chunk.type === "data-nacre-fold");
    expect(folds).toHaveLength(4);
    expect(new Set(folds.map((chunk) => chunk.id)).size).toBe(1);
    expect(folds[2]?.data).toEqual({ status: "compacting", reason: "budget", piece: 2, pieces: 2 });
    const message = await lastMessage(read, chunks);
    expect(message.parts.filter((part) => part.type === "data-nacre-fold").map((part) => part.data)).toEqual([
      { status: "compacted", reason: "budget", summary },
    ]);
  });

  it("should show a skipped fold in the same part as its start", async () => {
    const chunks = chunksOf([
      { type: "turn-start", chatId, message: textMessage(0, "user", "Hi") },
      { type: "compacting", chatId, reason: "manual" },
      { type: "compaction-skipped", chatId, reason: "manual", why: "nothing-to-fold" },
      ...answer(1, "Hello"),
      { type: "turn-end", chatId, seq: 0, status: "done", usage },
    ]);
    const message = await lastMessage(read, chunks);
    expect(message.parts.filter((part) => part.type === "data-nacre-fold").map((part) => part.data)).toEqual([
      { status: "skipped", reason: "manual", why: "nothing-to-fold" },
    ]);
  });

  it("should send a heal's health note as a transient part, which the message never holds", async () => {
    const note: HealthNote = {
      id: "n1",
      chatId,
      kind: "healed",
      text: "Chat refused; shortened and sent again.",
      at: 1,
    };
    const chunks = chunksOf([
      { type: "turn-start", chatId, message: textMessage(2, "user", "Go on") },
      ...answer(3, "Going on."),
      { type: "healed", chatId, seq: 2, provider: "openrouter", model: "chat", window: 8_000 },
      { type: "health-note", chatId, note },
      { type: "turn-end", chatId, seq: 2, status: "done", usage },
    ]);
    expect(chunks).toContainEqual({ type: "data-nacre-health", id: "n1", data: note, transient: true });

    const message = await lastMessage(read, chunks);

    expect(message.parts.map((part) => part.type)).toEqual(["step-start", "text"]);
    expect(message.metadata?.lastSeq).toBe(3);
  });

  it("should hold a problem as a part of the answer, which keeps nothing in the log", async () => {
    const problem: TurnProblem = {
      kind: "too-long",
      title: "This chat is too long for the model",
      next: { type: "new-chat", message: "Summarise it" },
    };
    const chunks = chunksOf([
      { type: "turn-start", chatId, message: textMessage(8, "user", "Summarise it") },
      { type: "turn-problem", chatId, seq: 8, problem },
      { type: "turn-end", chatId, seq: 8, status: "problem", usage },
    ]);

    const message = await lastMessage(read, chunks);

    expect(message.id).toBe("nacre-answer-8");
    expect(message.metadata).toMatchObject({ seq: 8, lastSeq: 8 });
    expect(message.parts).toEqual([{ type: "data-nacre-problem", id: "problem-8", data: { seq: 8, problem } }]);
  });

  it("should continue the same answer with the host's tool results, at the log's next seq", async () => {
    const first = await lastMessage(
      read,
      chunksOf([
        { type: "turn-start", chatId, message: textMessage(0, "user", "Weather in Oslo?") },
        { type: "message-start", chatId, seq: 1, role: "assistant", model: "chat" },
        { type: "thinking-delta", chatId, seq: 1, delta: "Ask the tool." },
        { type: "tool-call", chatId, seq: 1, id: "call-1", name: "weather", arguments: '{"city":"Oslo"}' },
        {
          type: "message-end",
          chatId,
          message: {
            seq: 1,
            role: "assistant",
            parts: [{ type: "tool-call", id: "call-1", name: "weather", arguments: '{"city":"Oslo"}' }],
          },
          finishReason: "tool-calls",
        },
        { type: "turn-end", chatId, seq: 0, status: "tool-calls", usage },
      ]),
    );
    expect(first.parts.map((part) => part.type)).toEqual(["step-start", "reasoning", "tool-weather"]);
    expect(first.parts[2]).toMatchObject({ toolCallId: "call-1", state: "input-available", input: { city: "Oslo" } });

    // What `addToolOutput` does to the message, then what the transport reads of it.
    const withOutput: NacreUIMessage = {
      ...first,
      parts: first.parts.map((part) =>
        part.type === "tool-weather" ? ({ ...part, state: "output-available", output: "12°C" } as typeof part) : part,
      ),
    };
    const plan = planNacreTurn(
      nacreTurnRequest({
        trigger: "submit-message",
        messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "Weather in Oslo?" }] }, withOutput],
      }),
    );
    expect(plan).toEqual({
      kind: "tool-results",
      seq: 2,
      answers: 0,
      toolResults: [{ type: "tool-result", callId: "call-1", name: "weather", text: "12°C" }],
    });

    const second = await lastMessage(
      read,
      chunksOf(
        [
          {
            type: "turn-start",
            chatId,
            message: { seq: 2, role: "tool", parts: [{ type: "tool-result", callId: "call-1", text: "12°C" }] },
          },
          ...answer(3, "It is 12°C in Oslo."),
          { type: "turn-end", chatId, seq: 2, status: "done", usage },
        ],
        0,
      ),
      withOutput,
    );

    expect(second.id).toBe(first.id);
    expect(second.metadata).toMatchObject({ seq: 0, lastSeq: 3 });
    expect(second.parts.map((part) => part.type)).toEqual([
      "step-start",
      "reasoning",
      "tool-weather",
      "step-start",
      "text",
    ]);
    expect(second.parts[2]).toMatchObject({ state: "output-available", output: "12°C" });
  });

  it("should finish a turn whose answer was cut off with length, and keep how it ended in the metadata", async () => {
    const chunks = chunksOf([
      { type: "turn-start", chatId, message: textMessage(2, "user", "List every country") },
      { type: "message-start", chatId, seq: 3, role: "assistant", model: "chat" },
      { type: "text-delta", chatId, seq: 3, delta: "Albania, Andorra" },
      {
        type: "message-end",
        chatId,
        message: textMessage(3, "assistant", "Albania, Andorra", { model: "chat", finishReason: "length" }),
        finishReason: "length",
      },
      { type: "turn-end", chatId, seq: 2, status: "done", usage },
    ]);
    expect(chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "length" });

    const message = await lastMessage(read, chunks);

    expect(message.metadata).toMatchObject({ seq: 2, lastSeq: 3, finishReason: "length" });
  });

  it("should keep what an aborted answer wrote and end on abort", async () => {
    const chunks = chunksOf([
      { type: "turn-start", chatId, message: textMessage(4, "user", "Tell me a long story") },
      { type: "message-start", chatId, seq: 5, role: "assistant", model: "chat" },
      { type: "text-delta", chatId, seq: 5, delta: "Once upon" },
      {
        type: "message-end",
        chatId,
        message: textMessage(5, "assistant", "Once upon", { model: "chat" }),
        finishReason: "aborted",
      },
      { type: "turn-end", chatId, seq: 4, status: "aborted", usage },
    ]);
    expect(chunks.at(-1)).toEqual({ type: "abort", reason: "aborted" });

    const message = await lastMessage(read, chunks);

    expect(message.parts.at(-1)).toMatchObject({ type: "text", text: "Once upon" });
    expect(message.metadata).toMatchObject({ seq: 4, lastSeq: 5, finishReason: "aborted" });
  });
});
