import { describe, expect, it } from "vitest";
import { TurnSequenceError } from "../errors.js";
import type { EngineEvent } from "../events.js";
import { generateLongChatScript } from "./long-chat.js";
import { createMockEngine } from "./mock-engine.js";

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("createMockEngine", () => {
  describe("given a listener that throws", () => {
    it("should tell onError and still end the turn done", async () => {
      const reported: Array<[unknown, unknown]> = [];
      const engine = createMockEngine({ onError: (error, context) => reported.push([error, context]) });
      const bug = new TypeError("a listener's bug");
      engine.subscribe((event) => {
        if (event.type === "turn-end") throw bug;
      });
      expect((await engine.sendTurn({ chatId: "c", seq: 0, text: "Hi" }).done).status).toBe("done");
      expect(reported).toEqual([[bug, { during: "listener" }]]);
    });
  });

  describe("given a scripted compaction before the third turn", () => {
    it("should emit compacting then compacted before the answer, with firstKeptSeq at the kept turn", async () => {
      const engine = createMockEngine({
        turns: [{ reply: "one" }, { reply: "two" }, { reply: "three", compaction: { summary: "S", keepTurns: 1 } }],
        now: () => 1000,
      });
      await engine.sendTurn({ chatId: "c", seq: 0, text: "a" }).done;
      await engine.sendTurn({ chatId: "c", seq: 2, text: "b" }).done;
      const events = await collect(engine.sendTurn({ chatId: "c", seq: 4, text: "c" }));
      const types = events.map((event) => event.type);
      expect(types.slice(0, 4)).toEqual(["turn-start", "compacting", "compacted", "message-start"]);
      expect(types.at(-1)).toBe("turn-end");
      const compacted = events.find((event) => event.type === "compacted");
      expect(compacted).toMatchObject({ text: "S", firstKeptSeq: 4, reason: "budget", model: "mock-small" });
      expect(compacted && compacted.type === "compacted" && compacted.before.messages).toBe(5);
      expect(compacted && compacted.type === "compacted" && compacted.after.messages).toBe(1);
      const text = events.flatMap((event) => (event.type === "text-delta" ? [event.delta] : [])).join("");
      expect(text).toBe("three");
      const chat = await engine.loadChat("c");
      expect(chat.messages).toHaveLength(6);
      expect(chat.summary?.firstKeptSeq).toBe(4);
    });
  });

  describe("given an abort in the middle of a stream", () => {
    it("should keep what was written, mark it aborted and end the turn as aborted", async () => {
      const controller = new AbortController();
      const engine = createMockEngine({ turns: { reply: "abcdefghijklmnopqrstuvwxyz" }, chunkSize: 2, delayMs: 1 });
      const stream = engine.sendTurn({ chatId: "c", seq: 0, text: "hi", abortSignal: controller.signal });
      const events: EngineEvent[] = [];
      for await (const event of stream) {
        events.push(event);
        if (event.type === "text-delta" && events.filter((e) => e.type === "text-delta").length === 3)
          controller.abort();
      }
      const end = await stream.done;
      expect(end.status).toBe("aborted");
      const messageEnd = events.find((event) => event.type === "message-end");
      expect(messageEnd).toMatchObject({ finishReason: "aborted" });
      const chat = await engine.loadChat("c");
      expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
      expect(chat.messages[1]?.parts).toEqual([{ type: "text", text: "abcdef" }]);
      expect(chat.messages[1]?.finishReason).toBe("aborted");
      // The chat goes on at the next seq.
      await engine.sendTurn({ chatId: "c", seq: 2, text: "again" }).done;
    });
  });

  describe("given a reply scripted to end at the output limit", () => {
    it("should end its message with length, on the event and on the message the log keeps", async () => {
      const engine = createMockEngine({ turns: [{ reply: "The list goes on and", finishReason: "length" }, {}] });
      const events = await collect(engine.sendTurn({ chatId: "c", seq: 0, text: "List them all" }));
      expect(events.find((event) => event.type === "message-end")).toMatchObject({
        finishReason: "length",
        message: { seq: 1, finishReason: "length" },
      });
      expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
      await engine.sendTurn({ chatId: "c", seq: 2, text: "Continue", continuation: true }).done;
      const chat = await engine.loadChat("c");
      expect(chat.messages.map((message) => message.finishReason)).toEqual([undefined, "length", undefined, "stop"]);
      expect(chat.messages[2]).toMatchObject({ role: "user", continuation: true });
    });
  });

  describe("given two turns in a row", () => {
    it("should give each its own seqs and refuse a seq that does not follow the log", async () => {
      const engine = createMockEngine({ turns: [{ reply: "first" }, { reply: "second" }] });
      const first = await engine.sendTurn({ chatId: "c", seq: 0, text: "1" }).done;
      const second = await engine.sendTurn({ chatId: "c", seq: 2, text: "2" }).done;
      expect([first.status, second.status]).toEqual(["done", "done"]);
      const chat = await engine.loadChat("c");
      expect(chat.messages.map((message) => [message.seq, message.role])).toEqual([
        [0, "user"],
        [1, "assistant"],
        [2, "user"],
        [3, "assistant"],
      ]);
      // Through the turn, never thrown at once: the same rule as an engine that learns it from a server.
      const refused = await engine.sendTurn({ chatId: "c", seq: 9, text: "x" }).done.catch((error: unknown) => error);
      expect(TurnSequenceError.isInstance(refused)).toBe(true);
      expect(refused).toMatchObject({ expectedSeq: 4, actualSeq: 9 });
      expect(engine.calls.map((call) => call.text)).toEqual(["1", "2"]);
    });

    it("should refuse a second turn while the first is running", async () => {
      const engine = createMockEngine({ delayMs: 5 });
      const first = engine.sendTurn({ chatId: "c", seq: 0, text: "1" });
      await expect(engine.sendTurn({ chatId: "c", seq: 1, text: "2" }).done).rejects.toThrow(/still answering/);
      await first.done;
    });
  });

  describe("compact()", () => {
    it("should fold all but the newest turn with reason manual and the focus in the summary", async () => {
      const engine = createMockEngine();
      const seen: EngineEvent[] = [];
      engine.subscribe((event) => seen.push(event));
      for (const seq of [0, 2, 4]) await engine.sendTurn({ chatId: "c", seq, text: `turn at ${seq}` }).done;
      const result = await engine.capabilities.context?.compact("c", { keep: "the invoice numbers" });
      expect(result?.status).toBe("compacted");
      expect(result?.status === "compacted" && result.summary.firstKeptSeq).toBe(4);
      expect(result?.status === "compacted" && result.summary.text).toContain("the invoice numbers");
      expect(seen.slice(-2).map((event) => event.type)).toEqual(["compacting", "compacted"]);
      expect(seen.at(-1)).toMatchObject({ type: "compacted", reason: "manual", firstKeptSeq: 4 });
      // Nothing left to fold: a second compact says so and changes nothing.
      const again = await engine.capabilities.context?.compact("c");
      expect(again).toEqual({ status: "nothing-to-fold" });
      expect(engine.compactCalls).toEqual([{ chatId: "c", keep: "the invoice numbers" }, { chatId: "c" }]);
    });
  });

  describe("given scripted healing and a problem", () => {
    it("should emit healed with a health note, then a turn problem that ends the turn", async () => {
      const engine = createMockEngine({
        turns: [
          { healed: { provider: "openai", window: 8192 } },
          {
            problem: {
              kind: "too-long",
              title: "Too long",
              next: { type: "new-chat", message: "the message" },
            },
          },
        ],
      });
      const healed = await collect(engine.sendTurn({ chatId: "c", seq: 0, text: "a" }));
      expect(healed.map((event) => event.type).slice(0, 3)).toEqual(["turn-start", "healed", "health-note"]);
      const problem = await collect(engine.sendTurn({ chatId: "c", seq: 2, text: "b" }));
      expect(problem.map((event) => event.type)).toEqual(["turn-start", "turn-problem", "turn-end"]);
      const chat = await engine.loadChat("c");
      expect(chat.problem?.problem.kind).toBe("too-long");
      expect(chat.healthNotes[0]).toMatchObject({ kind: "healed", provider: "openai" });
      // The person's message stays in the log.
      expect(chat.messages.at(-1)).toMatchObject({ seq: 2, role: "user" });
    });
  });

  describe("given a retry of the person's last message", () => {
    it("should answer it again without adding it twice, and refuse a retry of anything else", async () => {
      // Without branches: with them, a retry of an answered message is a regenerate (mock-engine.branches.test.ts).
      const engine = createMockEngine({
        branches: false,
        turns: [
          { problem: { kind: "offline", title: "Offline", next: { type: "retry" } } },
          { reply: "Now it works." },
        ],
      });
      await engine.sendTurn({ chatId: "c", seq: 0, text: "Hello" }).done;
      const end = await engine.sendTurn({ chatId: "c", seq: 0, text: "Hello", retry: true }).done;
      expect(end.status).toBe("done");
      const chat = await engine.loadChat("c");
      expect(chat.messages.map((message) => [message.seq, message.role])).toEqual([
        [0, "user"],
        [1, "assistant"],
      ]);
      const refused = engine.sendTurn({ chatId: "c", seq: 0, text: "Hello", retry: true }).done;
      expect(TurnSequenceError.isInstance(await refused.catch((error: unknown) => error))).toBe(true);
    });
  });

  describe("determinism", () => {
    it("should give the same events for the same script", async () => {
      async function play() {
        const script = generateLongChatScript({ turns: 12, compactEvery: 4, seed: 7 });
        const engine = createMockEngine({ ...script, now: () => 0 });
        const events: EngineEvent[] = [];
        engine.subscribe((event) => events.push(event));
        let seq = 0;
        for (const prompt of script.prompts) {
          await engine.sendTurn({ chatId: "long", seq, text: prompt }).done;
          seq += 2;
        }
        return events;
      }
      const first = await play();
      const second = await play();
      expect(second).toEqual(first);
      expect(first.filter((event) => event.type === "compacted")).toHaveLength(2);
    });
  });

  describe("capabilities", () => {
    it("should declare context unless told not to", () => {
      expect(createMockEngine().capabilities.context).toBeDefined();
      expect(createMockEngine({ context: false }).capabilities.context).toBeUndefined();
    });
  });
});
