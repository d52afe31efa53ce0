import { describe, expect, it } from "vitest";
import type { ChatMessage, MessageRole } from "../messages.js";
import { type CountedTranscript, planFold } from "./fold.js";
import { createEstimateCache, estimateMessagesTokens } from "./message-estimate.js";

// The budget test on the provider's count of what it was last sent (#26): a tokenizer unlike BPE runs well under the
// chat's factor (the highest ratio any long request ran) most of the time, so the part already counted is taken at
// its count.
const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index % 97}`).join(" ");
const message = (seq: number, role: MessageRole, text: string): ChatMessage => ({
  seq,
  role,
  parts: [{ type: "text", text }],
});
/** Four turns of a question and an answer, then the person's new message. */
const log: ChatMessage[] = [
  ...Array.from({ length: 8 }, (_, seq) => message(seq, seq % 2 === 0 ? "user" : "assistant", words(100))),
  message(8, "user", words(100)),
];
const sent = log.slice(0, 8);
const sentEstimate = estimateMessagesTokens(sent);
const newEstimate = estimateMessagesTokens(log.slice(8));
const factor = 2;
// Over the budget at estimate × factor; within it when what was sent counts at 1.2 × its estimate.
const budget = Math.ceil(1.2 * sentEstimate + factor * newEstimate) + 10;
const counted = (over: Partial<CountedTranscript> = {}): CountedTranscript => ({
  seqs: sent.map((value) => value.seq),
  summary: null,
  tokens: Math.ceil(1.2 * sentEstimate),
  ...over,
});
const plan = (extra: { counted?: CountedTranscript; summary?: string }) =>
  planFold({ messages: log, budget, factor, cache: createEstimateCache(), ...extra });

describe("planFold with the provider's count of what it was last sent", () => {
  it("sizes the part already sent at its count, the new message at estimate × factor: no fold while that fits", () => {
    expect(factor * (sentEstimate + newEstimate)).toBeGreaterThan(budget);
    expect(plan({}).fold).toBe(true);
    const planned = plan({ counted: counted() });
    expect(planned.fold).toBe(false);
    expect(planned.reason).toBeNull();
    expect(planned.kept.map((value) => value.seq)).toEqual(log.map((value) => value.seq));
    // What is sent is reported at the same size the budget test used (the usage a host shows).
    expect(planned.tokens).toBe(Math.ceil(counted().tokens + factor * newEstimate));
    expect(planned.fits).toBe(true);
  });

  it("folds once the count and the new message pass the budget", () => {
    expect(plan({ counted: counted({ tokens: budget }) }).fold).toBe(true);
  });

  it("never counts the part below its estimate (the correction only rises)", () => {
    // A count under the estimate would fit a budget the estimate alone does not.
    const tight = sentEstimate + factor * newEstimate - 5;
    const planned = planFold({ messages: log, budget: tight, factor, counted: counted({ tokens: 1 }) });
    expect(planned.fold).toBe(true);
  });

  it("is not used when what is kept no longer begins with the messages counted, or under another summary", () => {
    expect(plan({ counted: counted({ seqs: [0, 1, 2, 3, 4, 5, 6, 9] }) }).fold).toBe(true);
    expect(plan({ counted: counted({ seqs: [1, 2, 3, 4, 5, 6, 7] }) }).fold).toBe(true);
    expect(plan({ counted: counted({ seqs: [...sent.map((value) => value.seq), 8, 9] }) }).fold).toBe(true);
    expect(plan({ counted: counted(), summary: "They talked." }).fold).toBe(true);
  });
});
