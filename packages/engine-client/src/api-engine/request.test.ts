import { describe, expect, it } from "vitest";
import { computeBudget } from "../context/budget.js";
import { planFold } from "../context/fold.js";
import type { ChatMessage } from "../messages.js";
import { buildTurnRequest } from "./request.js";
import type { Sizing } from "./sizing.js";

const log: ChatMessage[] = [
  { seq: 0, role: "user", parts: [{ type: "text", text: "First question" }], createdAt: 1 },
  { seq: 1, role: "assistant", parts: [{ type: "text", text: "First answer" }], createdAt: 2 },
  { seq: 2, role: "user", parts: [{ type: "text", text: "Second question" }], createdAt: 3 },
];
const size: Sizing = {
  modelId: "m",
  info: { id: "m", displayName: "M", ready: true, local: false, provider: "openai" },
  family: undefined,
  factor: 2,
  systemTokens: 10,
  toolTokens: 0,
  budget: computeBudget({ window: 32_000, systemTokens: 10, factor: 2 }),
};

describe("buildTurnRequest", () => {
  const planned = planFold({ messages: log, summary: null, budget: size.budget.budget, mode: "auto", factor: 2 });

  it("should send the kept messages with the answer room, the window and the cache breakpoint before the turn", () => {
    const { request, estimatedTokens } = buildTurnRequest(
      { systemPrompt: "Be brief." },
      size,
      planned,
      null,
      undefined,
    );
    expect(request.system).toBe("Be brief.");
    expect(request.messages.map((message) => message.seq)).toEqual([0, 1, 2]);
    expect(request.maxOutputTokens).toBe(size.budget.answerRoom);
    expect(request.contextWindow).toBe(32_000);
    expect(request.cacheBreakpointIndex).toBe(1);
    expect(request.tools).toBeUndefined();
    // The estimate before the factor: what the provider's input tokens are compared to.
    expect(estimatedTokens).toBeCloseTo(10 + planned.tokens / 2);
  });

  it("should frame a summary into the first person's message, never a message of its own", () => {
    const summary = {
      text: "They talked about questions.",
      model: "m",
      firstKeptSeq: 0,
      reason: "manual" as const,
      before: { messages: 0, tokens: 0 },
      folded: { messages: 0, tokens: 0 },
      after: { messages: 0, tokens: 0 },
      at: 0,
    };
    const { request } = buildTurnRequest({}, size, planned, summary as never, undefined);
    expect(request.messages.map((message) => message.seq)).toEqual([0, 1, 2]);
    expect(JSON.stringify(request.messages[0])).toContain("They talked about questions.");
    expect(JSON.stringify(request.messages[0])).toContain("First question");
  });
});
