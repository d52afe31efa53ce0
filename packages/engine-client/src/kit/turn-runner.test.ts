import { describe, expect, it } from "vitest";
import { ChatBusyError } from "../errors.js";
import type { EngineEvent, EngineEventOf } from "../events.js";
import { emptyUsage } from "../messages.js";
import { createFanOut } from "./fan-out.js";
import { createTurnRunner } from "./turn-runner.js";

const end: EngineEventOf<"turn-end"> = { type: "turn-end", chatId: "c", seq: 0, status: "done", usage: emptyUsage };

function deferred<T>() {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

describe("createTurnRunner", () => {
  describe("given a turn followed that this engine did not start", () => {
    it("should tell listeners its events, keep the chat busy until it ends, then take a turn", async () => {
      const events = createFanOut<EngineEvent>();
      const heard: EngineEvent[] = [];
      events.subscribe((event) => heard.push(event));
      const runner = createTurnRunner({ emit: events.emit });
      const release = deferred<void>();
      const followed = runner.follow("c", async (send) => {
        send({ type: "text-delta", chatId: "c", seq: 1, delta: "rest" });
        await release.promise;
        send(end);
        return end;
      });
      expect(runner.isBusy("c")).toBe(true);
      expect(runner.follow("c", async () => end)).toBeNull();
      const refused = runner.start({ chatId: "c", seq: 2, text: "x" }, async () => end);
      await expect(refused.done).rejects.toSatisfy(ChatBusyError.isInstance);
      release.resolve();
      await expect(followed).resolves.toEqual(end);
      expect(heard.map((event) => event.type)).toEqual(["text-delta", "turn-end"]);
      expect(runner.isBusy("c")).toBe(false);
      await expect(runner.start({ chatId: "c", seq: 2, text: "x" }, async () => end).done).resolves.toEqual(end);
    });
  });

  describe("given a task queued while a turn runs", () => {
    it("should run it after the turn", async () => {
      const runner = createTurnRunner({ emit: () => undefined });
      const order: string[] = [];
      const release = deferred<void>();
      const turn = runner.start({ chatId: "c", seq: 0, text: "x" }, async () => {
        await release.promise;
        order.push("turn");
        return end;
      });
      const task = runner.queued("c", async () => order.push("task"));
      release.resolve();
      await Promise.all([turn.done, task]);
      expect(order).toEqual(["turn", "task"]);
    });
  });
});
