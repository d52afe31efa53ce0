import { describe, expect, it } from "vitest";
import { ChatBusyError } from "../errors.js";
import type { EngineEvent, EngineEventOf } from "../events.js";
import { emptyUsage } from "../messages.js";
import { createTurnStream } from "./turn-stream.js";

function delta(index: number): EngineEvent {
  return { type: "text-delta", chatId: "c", seq: 1, delta: `${index}` };
}

const end: EngineEventOf<"turn-end"> = { type: "turn-end", chatId: "c", seq: 0, status: "done", usage: emptyUsage };

async function read(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("createTurnStream", () => {
  describe("given nobody reads the stream", () => {
    it("should buffer nothing: a reader that comes later gets only what came after it", async () => {
      const writer = createTurnStream(Promise.resolve(end));
      for (let index = 0; index < 1_000; index += 1) writer.push(delta(index));
      const iterator = writer.stream[Symbol.asyncIterator]();
      writer.push(delta(1_000));
      writer.close();
      expect(await iterator.next()).toEqual({ value: delta(1_000), done: false });
      expect(await iterator.next()).toEqual({ value: undefined, done: true });
    });
  });

  describe("given a reader from the start", () => {
    it("should give it every event in order, then end", async () => {
      const writer = createTurnStream(Promise.resolve(end));
      const events = read(writer.stream);
      for (let index = 0; index < 5; index += 1) writer.push(delta(index));
      writer.close();
      expect(await events).toEqual([0, 1, 2, 3, 4].map(delta));
    });
  });

  describe("given a turn that fails", () => {
    it("should reject the reader with the turn's error once it has read what came", async () => {
      const failed = Promise.reject(new ChatBusyError("c"));
      failed.catch(() => undefined);
      const writer = createTurnStream(failed);
      const events: EngineEvent[] = [];
      const reading = (async () => {
        for await (const event of writer.stream) events.push(event);
      })();
      writer.push(delta(0));
      writer.close();
      await expect(reading).rejects.toSatisfy(ChatBusyError.isInstance);
      expect(events).toEqual([delta(0)]);
    });
  });

  describe("given a reader that stops early", () => {
    it("should stop buffering for it", async () => {
      const writer = createTurnStream(Promise.resolve(end));
      const iterator = writer.stream[Symbol.asyncIterator]();
      await iterator.return?.();
      writer.push(delta(0));
      writer.close();
      expect(await iterator.next()).toEqual({ value: undefined, done: true });
    });
  });
});
