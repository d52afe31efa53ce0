import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { createMockEngine } from "../mock/mock-engine.js";
import { readEventStream } from "../protocol/event-stream.js";
import { createEngineHandler } from "./handler.js";
import { type ChatLease, createInProcessRunningTurns, type RunningTurns } from "./running-turns.js";

/**
 * Running turns whose release waits for `gate` (as a database's release waits for its round trip), and that say
 * when a release was asked for.
 */
function slowReleases(gate: Promise<void>, onRelease: () => void): RunningTurns {
  const inner = createInProcessRunningTurns();
  const slow = (lease: ChatLease): ChatLease => ({
    ...lease,
    async release() {
      onRelease();
      await gate;
      await lease.release();
    },
  });
  return {
    ...inner,
    tryAcquire: async (key, purpose) => {
      const lease = await inner.tryAcquire(key, purpose);
      return lease && slow(lease);
    },
    acquire: async (key, purpose, signal) => slow(await inner.acquire(key, purpose, signal)),
  };
}

const turn = (seq: number) =>
  new Request("http://127.0.0.1/chats/slow-release/turns", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ seq, text: `Question at ${seq}` }),
  });

describe("POST /chats/{id}/turns", () => {
  describe("given a chat whose lease takes a while to give up once the turn has ended", () => {
    it("should send the stream's turn-end only once the chat is free, so the person's next turn is taken", async () => {
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      let releaseAsked: () => void = () => undefined;
      const asked = new Promise<void>((resolve) => {
        releaseAsked = resolve;
      });
      const engine = createMockEngine();
      const handler = createEngineHandler({
        engineFor: () => engine,
        authorize: () => ({ userId: "alice" }),
        runningTurns: slowReleases(gate, releaseAsked),
      });

      const first = await handler(turn(0));
      expect(first.status).toBe(200);
      const received: EngineEvent[] = [];
      const reading = (async () => {
        for await (const message of readEventStream(first.body as ReadableStream<Uint8Array>)) {
          received.push(JSON.parse(message.data) as EngineEvent);
        }
      })();
      await asked;
      // The turn has ended and its release is under way: the stream holds its turn-end back meanwhile.
      for (let tick = 0; tick < 20; tick++) await new Promise((resolve) => setImmediate(resolve));
      expect(received.some((event) => event.type === "turn-end")).toBe(false);
      open();
      await reading;
      expect(received.at(-1)).toMatchObject({ type: "turn-end", status: "done" });

      // The moment the stream ended, the next turn: taken, never a 409.
      const second = await handler(turn(2));
      expect(second.status).toBe(200);
      await second.body?.cancel();
    });
  });
});
