import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatMessage, MessagePart } from "../messages.js";
import { type FoldState, initialFoldState, planFold } from "./fold.js";
import { buildRequestMessages } from "./frame.js";
import { createEstimateCache, estimateMessagesTokens } from "./message-estimate.js";
import { heldByRoomOnly, holdTurn, leftOutMarker } from "./shorten.js";

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index % 97}`).join(" ");
const unit = fc.constantFrom("a", "b", "Z", " ", "\n", "1", "{", '"', "中", "😀", "é", "я");
const longText = fc.oneof(fc.string({ unit, maxLength: 6_000 }), fc.integer({ min: 0, max: 3_000 }).map(words));

/** One agent turn: the person's message, then rounds of a short model message with a tool call and its result. */
const agentTurn = (maxRounds: number): fc.Arbitrary<ChatMessage[]> =>
  fc
    .record({
      person: longText,
      rounds: fc.array(fc.record({ say: fc.string({ maxLength: 60 }), result: longText }), {
        minLength: 1,
        maxLength: maxRounds,
      }),
    })
    .map(({ person, rounds }) => {
      const messages: ChatMessage[] = [];
      const add = (role: ChatMessage["role"], parts: MessagePart[]) =>
        messages.push({ seq: messages.length, role, parts });
      add("user", [{ type: "text", text: person }]);
      for (const round of rounds) {
        const id = `call_${messages.length}`;
        add("assistant", [
          { type: "text", text: round.say },
          { type: "tool-call", id, name: "run", arguments: '{"cmd":"ls"}' },
        ]);
        add("tool", [{ type: "tool-result", callId: id, name: "run", text: round.result }]);
      }
      return messages;
    });

/** The texts of a message, for comparing what is sent. */
const sentParts = (messages: readonly ChatMessage[]) => messages.map((message) => JSON.stringify(message.parts));

describe("holdTurn", () => {
  describe("given a turn that grows", () => {
    it("should never change the bytes already sent, and hold each text to its share of the room left", () => {
      fc.assert(
        fc.property(
          agentTurn(12),
          fc.integer({ min: 500, max: 20_000 }),
          fc.constantFrom(heldByRoomOnly, 300, 2_000),
          (turn, roomTokens, maxChars) => {
            const cache = createEstimateCache();
            let before: readonly string[] = [];
            for (let length = 1; length <= turn.length; length++) {
              const held = holdTurn({ messages: turn.slice(0, length), maxChars, roomTokens, cache });
              const now = sentParts(held.messages);
              expect(now.slice(0, before.length)).toEqual(before);
              expect(held.tokens).toBe(estimateMessagesTokens(held.messages, undefined, cache));
              before = now;
            }
          },
        ),
        { numRuns: 120 },
      );
    });

    it("should send the same bytes whatever cache it is given (a rule, not a memory)", () => {
      fc.assert(
        fc.property(agentTurn(8), fc.integer({ min: 500, max: 20_000 }), (turn, roomTokens) => {
          const first = holdTurn({
            messages: turn,
            maxChars: heldByRoomOnly,
            roomTokens,
            cache: createEstimateCache(),
          });
          const again = holdTurn({
            messages: turn,
            maxChars: heldByRoomOnly,
            roomTokens,
            cache: createEstimateCache(),
          });
          expect(sentParts(again.messages)).toEqual(sentParts(first.messages));
        }),
        { numRuns: 60 },
      );
    });
  });

  describe("given a turn with a long tool result", () => {
    it("should keep the head and the tail with the marker, and never change the model's messages", () => {
      const turn: ChatMessage[] = [
        { seq: 0, role: "user", parts: [{ type: "text", text: "read the log" }] },
        { seq: 1, role: "assistant", parts: [{ type: "tool-call", id: "c1", name: "read", arguments: "{}" }] },
        { seq: 2, role: "tool", parts: [{ type: "tool-result", callId: "c1", text: `HEAD ${words(5_000)} TAIL` }] },
      ];
      const held = holdTurn({
        messages: turn,
        maxChars: heldByRoomOnly,
        roomTokens: 4_000,
        cache: createEstimateCache(),
      });
      expect(held.messages[1]).toBe(turn[1]);
      const result = held.messages[2]?.parts[0];
      expect(result?.type === "tool-result" && result.text.startsWith("HEAD ")).toBe(true);
      expect(result?.type === "tool-result" && result.text.endsWith(" TAIL")).toBe(true);
      expect(held.shortened.map((text) => text.seq)).toEqual([2]);
      const leftOut = held.shortened[0]?.leftOutCharacters ?? 0;
      expect(result?.type === "tool-result" && result.text.includes(leftOutMarker(leftOut))).toBe(true);
      expect(held.tokens).toBeLessThanOrEqual(4_000);
    });
  });
});

describe("planFold with a growing agent turn", () => {
  it("should never plan a request over the budget, and keep the bytes already sent while the model's messages fit", () => {
    fc.assert(
      fc.property(agentTurn(8), fc.integer({ min: 4_000, max: 30_000 }), (turn, budget) => {
        const cache = createEstimateCache();
        let state: FoldState = initialFoldState;
        let previous: readonly string[] | null = null;
        for (let length = 1; length <= turn.length; length++) {
          const plan = planFold({ messages: turn.slice(0, length), budget, previous: state, cache });
          const request = buildRequestMessages(plan.kept, null);
          expect(plan.fits).toBe(true);
          expect(plan.tokens).toBeLessThanOrEqual(budget);
          expect(estimateMessagesTokens(request, undefined, cache)).toBeLessThanOrEqual(budget);
          const now = sentParts(request);
          if (previous !== null) expect(now.slice(0, previous.length)).toEqual(previous);
          expect(plan.changed && length > 1).toBe(false);
          previous = now;
          state = plan.state;
        }
      }),
      { numRuns: 120 },
    );
  });
});
