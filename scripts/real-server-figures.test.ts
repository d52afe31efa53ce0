import { describe, expect, it } from "vitest";
import type { TurnRecord } from "./real-server-chat.js";
import { chatFigures, type TurnExchanges } from "./real-server-figures.js";
import type { RecordedExchange } from "./recording-proxy.js";

type Sent = { readonly role: string; readonly content: string };

/** An answered answer request as the recording proxy keeps it. */
function answered(messages: readonly Sent[], answer: string, cached: number, prompt: number, completion: number) {
  return {
    method: "POST",
    path: "/v1/chat/completions",
    kind: "chat",
    status: 200,
    body: { messages },
    text: answer,
    timings: { cache_n: cached, prompt_n: prompt, predicted_n: completion },
    usage: { prompt_tokens: cached + prompt, completion_tokens: completion },
    startedAt: 0,
    endedAt: 0,
  } as RecordedExchange;
}

const summaryRequest = {
  method: "POST",
  path: "/v1/chat/completions",
  kind: "summary",
  status: 200,
  body: { messages: [{ role: "user", content: "Summarise." }] },
  text: "A summary.",
  startedAt: 0,
  endedAt: 0,
} as RecordedExchange;

function turn(index: number, exchanges: readonly RecordedExchange[]): TurnExchanges {
  const record = {
    index,
    turn: { kind: "english", text: `Turn ${index}.`, source: "test" },
    seq: index * 2,
    events: [],
    compacted: [],
    healed: [],
    healthNotes: [],
    problem: null,
    status: "done",
    answer: "",
    contextUsage: null,
    milliseconds: 1,
  } as unknown as TurnRecord;
  return { record, exchanges };
}

const system = { role: "system", content: "You are a helpful assistant." };
const first = [system, { role: "user", content: "Turn 0." }];
const second = [...first, { role: "assistant", content: "Once upon a time" }, { role: "user", content: "Turn 1." }];

describe("the real server's prompt-cache figures", () => {
  it("should count what the server read again after re-tokenizing the last answer unlike it generated it", async () => {
    // 100 prompt tokens and a 50-token answer: the next request could read 149 from the cache; it read 120.
    const turns = [
      turn(0, [answered(first, "Once upon a time", 0, 100, 50)]),
      turn(1, [answered(second, "The end", 120, 60, 10)]),
    ];
    const figures = await chatFigures(turns, 8192, async () => 0);
    expect(figures.answerPromptTokens).toBe(280);
    expect(figures.cacheShare).toBeCloseTo(120 / 280);
    expect(figures.retokenizedTokens).toBe(29);
  });

  it("should count nothing when the request did not repeat the last one word for word, or a summary came between", async () => {
    const edited = [system, { role: "user", content: "Turn 0, edited." }, ...second.slice(2)];
    const notRepeated = await chatFigures(
      [turn(0, [answered(first, "Once upon a time", 0, 100, 50)]), turn(1, [answered(edited, "The end", 2, 178, 10)])],
      8192,
      async () => 0,
    );
    expect(notRepeated.retokenizedTokens).toBe(0);
    const afterSummary = await chatFigures(
      [
        turn(0, [answered(first, "Once upon a time", 0, 100, 50), summaryRequest]),
        turn(1, [answered(second, "The end", 0, 180, 10)]),
      ],
      8192,
      async () => 0,
    );
    expect(afterSummary.retokenizedTokens).toBe(0);
    const whole = await chatFigures(
      [turn(0, [answered(first, "Once upon a time", 0, 100, 50)]), turn(1, [answered(second, "The end", 149, 31, 10)])],
      8192,
      async () => 0,
    );
    expect(whole.retokenizedTokens).toBe(0);
    expect(whole.cacheShare).toBeCloseTo(149 / 280);
  });
});
