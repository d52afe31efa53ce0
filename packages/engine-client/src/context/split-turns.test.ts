import { describe, expect, it } from "vitest";
import { type ChatMessage, type MessageRole, textMessage } from "../messages.js";
import { splitTurns } from "./turns.js";

const chat = (roles: MessageRole[]): ChatMessage[] => roles.map((role, seq) => textMessage(seq, role, role));

describe("splitTurns", () => {
  describe("given messages", () => {
    it.each([
      { name: "no messages", roles: [], expected: [] },
      { name: "one person's message", roles: ["user"], expected: [{ from: 0, to: 1 }] },
      {
        name: "a question and an answer, twice",
        roles: ["user", "assistant", "user", "assistant"],
        expected: [
          { from: 0, to: 2 },
          { from: 2, to: 4 },
        ],
      },
      {
        name: "an agent's tool rounds (one turn)",
        roles: ["user", "assistant", "tool", "assistant", "tool", "assistant"],
        expected: [{ from: 0, to: 6 }],
      },
      {
        name: "tool start-up lines before the person's first message (they join the first turn)",
        roles: ["tool", "tool", "user", "assistant", "user"],
        expected: [
          { from: 0, to: 4 },
          { from: 4, to: 5 },
        ],
      },
      {
        name: "two person's messages in a row",
        roles: ["user", "user", "assistant"],
        expected: [
          { from: 0, to: 1 },
          { from: 1, to: 3 },
        ],
      },
      { name: "no person's message at all", roles: ["tool", "assistant"], expected: [{ from: 0, to: 2 }] },
    ] satisfies { name: string; roles: MessageRole[]; expected: unknown }[])(
      "should split $name",
      ({ roles, expected }) => {
        expect(splitTurns(chat(roles))).toEqual(expected);
      },
    );
  });

  describe("given messages and a start", () => {
    it.each([
      {
        name: "from a person's message (indices stay the list's own)",
        roles: ["user", "assistant", "user", "assistant", "user"],
        start: 2,
        expected: [
          { from: 2, to: 4 },
          { from: 4, to: 5 },
        ],
      },
      {
        name: "from a tool line (it joins the first turn after the start)",
        roles: ["user", "tool", "user", "assistant"],
        start: 1,
        expected: [{ from: 1, to: 4 }],
      },
      { name: "at the end (no turns)", roles: ["user", "assistant"], start: 2, expected: [] },
    ] satisfies { name: string; roles: MessageRole[]; start: number; expected: unknown }[])(
      "should split $name",
      ({ roles, start, expected }) => {
        expect(splitTurns(chat(roles), start)).toEqual(expected);
      },
    );
  });
});
