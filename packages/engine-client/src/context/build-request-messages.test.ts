import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { buildRequestMessages, frameSummary } from "./frame.js";

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
};

const question: ChatMessage = { seq: 5, role: "user", parts: [{ type: "text", text: "What next?" }] };
const answer: ChatMessage = {
  seq: 6,
  role: "assistant",
  parts: [
    { type: "thinking", text: "hmm", signature: "sig" },
    { type: "text", text: "This." },
  ],
};
const toolLine: ChatMessage = { seq: 0, role: "tool", parts: [{ type: "text", text: "aider v0.80" }] };
const withPicture: ChatMessage = {
  seq: 5,
  role: "user",
  parts: [
    { type: "picture", name: "a.png", mediaType: "image/png", data: "AA" },
    { type: "text", text: "What is this?" },
  ],
};
const framed = frameSummary("S");

describe("buildRequestMessages", () => {
  describe("given kept messages and a summary", () => {
    it.each([
      { name: "no summary", kept: [question, answer], summary: null, expected: [question, answer] },
      { name: "an empty summary", kept: [question, answer], summary: "", expected: [question, answer] },
      { name: "nothing kept and no summary", kept: [], summary: undefined, expected: [] },
      {
        name: "a summary (merged into the first person's text)",
        kept: [question, answer],
        summary: "S",
        expected: [{ ...question, parts: [{ type: "text", text: `${framed}\n\nWhat next?` }] }, answer],
      },
      {
        name: "a summary and a person's message that opens with a picture (a text part in front)",
        kept: [withPicture],
        summary: "S",
        expected: [{ ...withPicture, parts: [{ type: "text", text: framed }, ...withPicture.parts] }],
      },
      {
        name: "a summary and tool lines before the person's message (the person's message carries it)",
        kept: [toolLine, question],
        summary: "S",
        expected: [toolLine, { ...question, parts: [{ type: "text", text: `${framed}\n\nWhat next?` }] }],
      },
      {
        name: "a summary and no person's message (a message of its own)",
        kept: [toolLine],
        summary: "S",
        expected: [{ seq: 0, role: "user", parts: [{ type: "text", text: framed }] }, toolLine],
      },
    ] satisfies { name: string; kept: ChatMessage[]; summary: string | null | undefined; expected: ChatMessage[] }[])(
      "should send $name",
      ({ kept, summary, expected }) => {
        const frozen = deepFreeze(structuredClone(kept));
        const request = buildRequestMessages(frozen, summary);
        expect(request).toEqual(expected);
        expect(request).not.toBe(frozen);
        for (const message of request) {
          if (message.role === "assistant") expect(frozen).toContain(message);
        }
      },
    );
  });
});
