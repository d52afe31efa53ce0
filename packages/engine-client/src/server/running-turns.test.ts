import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { type ChatKey, createInProcessRunningTurns, type NumberedEvent, type RunningTurns } from "./running-turns.js";

const key = (chatId: string): ChatKey => ({ userId: "mallory", chatId });
const turnStart = (chatId: string, seq: number): EngineEvent => ({
  type: "turn-start",
  chatId,
  message: { seq, role: "user", parts: [{ type: "text", text: "hi" }], createdAt: 0 },
});
const turnEnd = (chatId: string, seq: number): EngineEvent => ({
  type: "turn-end",
  chatId,
  seq,
  status: "done",
  usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 },
});

/** What `follow` has stored for the chat now (it stops at once, so live events are not waited for). */
async function stored(turns: RunningTurns, chat: ChatKey, after: string | null = null): Promise<NumberedEvent[]> {
  const controller = new AbortController();
  const seen: NumberedEvent[] = [];
  const following = turns.follow(chat, after, controller.signal)[Symbol.asyncIterator]();
  queueMicrotask(() => controller.abort());
  for (let next = await following.next(); !next.done; next = await following.next()) seen.push(next.value);
  return seen;
}

describe("the in-process running turns", () => {
  describe("given chat ids nobody ever wrote, named by abort, activity, settled, events and delete", () => {
    it("should keep nothing for any of them", async () => {
      const turns = createInProcessRunningTurns();
      for (let index = 0; index < 50; index++) {
        const chat = key(`ghost-${index}`);
        expect(await turns.requestAbort(chat)).toBe(false);
        expect(await turns.activity(chat)).toEqual({ running: false, cursor: null, turnSeq: null });
        await turns.settled(chat);
        expect(await stored(turns, chat)).toEqual([]);
        await turns.forget(chat);
      }
      expect(turns.heldChats()).toBe(0);
    });
  });

  describe("given a lease that recorded nothing (a turn refused for a stale seq, a fold with nothing to fold)", () => {
    it("should keep nothing for a new chat, and leave an earlier turn's events where there was one", async () => {
      let now = 1_000_000;
      const turns = createInProcessRunningTurns({ now: () => now });
      const refused = await turns.tryAcquire(key("new"), "turn");
      await refused?.release();
      const folded = await turns.acquire(key("new"), "compact");
      await folded.release();
      expect(turns.heldChats()).toBe(0);

      const chat = key("used");
      const turn = (await turns.tryAcquire(chat, "turn"))!;
      const events = [await turn.record(turnStart("used", 0)), await turn.record(turnEnd("used", 0))];
      await turn.release();
      now += 1000;
      const stale = (await turns.tryAcquire(chat, "turn"))!;
      await stale.release();
      expect(await stored(turns, chat)).toEqual(events);
      expect(turns.heldChats()).toBe(1);
    });
  });

  describe("given a fold ahead holding the chat", () => {
    it("should give way to any other lease at once, its holder losing it, but not to another fold", async () => {
      const turns = createInProcessRunningTurns();
      const chat = key("folding");
      for (const purpose of ["turn", "compact", "delete"] as const) {
        const folding = (await turns.tryAcquire(chat, "fold"))!;
        expect(await turns.tryAcquire(chat, "fold")).toBeNull();
        expect((await turns.activity(chat)).running).toBe(false);
        const taking = (await turns.tryAcquire(chat, purpose))!;
        expect(taking.purpose).toBe(purpose);
        expect(folding.abortSignal.aborted).toBe(true);
        await expect(folding.record(turnEnd(chat.chatId, 0))).rejects.toThrow();
        await folding.release();
        expect(await turns.tryAcquire(chat, "turn")).toBeNull();
        await taking.release();
      }
    });
  });

  describe("given a turn that ended", () => {
    it("should keep its events for the resume window and not after, whatever else is asked meanwhile", async () => {
      let now = 1_000_000;
      const turns = createInProcessRunningTurns({ now: () => now, keepFinishedMs: 600_000 });
      const chat = key("c1");
      const turn = (await turns.tryAcquire(chat, "turn"))!;
      const events = [await turn.record(turnStart("c1", 0)), await turn.record(turnEnd("c1", 0))];
      await turn.release();
      for (let index = 0; index < 20; index++) await turns.requestAbort(key(`ghost-${index}`));
      now += 599_000;
      expect(await stored(turns, chat)).toEqual(events);
      expect(await turns.activity(chat)).toMatchObject({ running: false, cursor: events[1]?.id });
      now += 2000;
      expect(await turns.requestAbort(key("anything"))).toBe(false);
      expect(turns.heldChats()).toBe(0);
      expect(await stored(turns, chat)).toEqual([]);
    });
  });
});
