import type { SummaryState } from "../../events.js";
import type { ChatMessage } from "../../messages.js";
import type { TranscriptFile } from "../transcript-file.js";

/**
 * A log with every kind of part: the person's words, thinking with a signature and redacted thinking, a tool
 * call and its result, a picture with its bytes, and how each reply ended (the last one cut off).
 */
export function sampleLog(): ChatMessage[] {
  return [
    {
      seq: 0,
      role: "user",
      parts: [{ type: "text", text: "Plan the trip to Lisbon — 3 days, 🐚 included." }],
      createdAt: 1,
    },
    {
      seq: 1,
      role: "assistant",
      model: "claude-x",
      parts: [
        { type: "thinking", text: "They want a plan.", signature: "EqQBCkYIBRgCKkDx+/=\u0000sig" },
        { type: "thinking", text: "", redacted: true, signature: "RWRhY3RlZA==" },
        { type: "tool-call", id: "call_1", name: "weather", arguments: '{"city":"Lisbon","days":3}' },
      ],
      finishReason: "tool-calls",
    },
    {
      seq: 2,
      role: "tool",
      parts: [{ type: "tool-result", callId: "call_1", name: "weather", text: "sunny, 24°C", isError: false }],
    },
    {
      seq: 3,
      role: "user",
      parts: [
        { type: "text", text: "And this one?" },
        { type: "picture", name: "tram.png", mediaType: "image/png", data: "iVBORw0KGgo=" },
      ],
    },
    {
      seq: 4,
      role: "assistant",
      model: "claude-x",
      parts: [{ type: "text", text: "That is tram 28." }],
      finishReason: "length",
    },
  ];
}

/** The summary of a fold that kept the log from `firstKeptSeq`. */
export function sampleSummary(firstKeptSeq: number): SummaryState {
  return {
    text: "The person plans 3 days in Lisbon.",
    model: "small-model",
    firstKeptSeq,
    reason: "budget",
    before: { messages: 5, tokens: 9000 },
    after: { messages: 2, tokens: 300 },
    at: 1_700_000_000_000,
  };
}

/**
 * A transcript of at least `megabytes` MiB of JSON, in pieces of text with multi-byte characters, tagged with
 * `label` so two of them differ everywhere.
 */
export function bigTranscript(id: string, label: string, megabytes: number): TranscriptFile {
  const piece = `${label} é🐚 `.repeat(Math.ceil((1024 * 1024) / (label.length + 7)));
  const messages = Array.from({ length: Math.ceil(megabytes) + 1 }, (_, index) => ({
    role: index % 2 === 0 ? ("user" as const) : ("tool" as const),
    parts: [{ type: "text" as const, text: `${index}:${piece}` }],
  }));
  return {
    version: 1,
    id,
    model: "m",
    updatedAt: 1,
    messages,
    seqs: messages.map((_, index) => index),
    summary: sampleSummary(0),
    factor: 1.25,
    readUntil: label,
  };
}
