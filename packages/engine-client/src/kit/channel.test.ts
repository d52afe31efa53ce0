import { describe, expect, it } from "vitest";
import { createChannel } from "./channel.js";

describe("createChannel", () => {
  describe("given values pushed before and while a reader waits", () => {
    it("should give them in order, then end once closed", async () => {
      const channel = createChannel<number>();
      channel.push(1);
      const read = (async () => {
        const values: number[] = [];
        for await (const value of channel) values.push(value);
        return values;
      })();
      channel.push(2);
      channel.close();
      channel.push(3);
      expect(await read).toEqual([1, 2]);
      expect(channel.closed).toBe(true);
    });
  });

  describe("given a reader that stops early", () => {
    it("should drop what it kept and take no more", async () => {
      const channel = createChannel<number>();
      channel.push(1);
      channel.push(2);
      const iterator = channel[Symbol.asyncIterator]();
      expect(await iterator.next()).toEqual({ value: 1, done: false });
      await iterator.return?.();
      channel.push(3);
      expect(await iterator.next()).toEqual({ value: undefined, done: true });
    });
  });
});
