import { describe, expect, it } from "vitest";
import { createFanOut } from "./fan-out.js";

describe("createFanOut", () => {
  describe("given a listener that throws", () => {
    it("should still reach every other listener and report the error to onError, as a listener's", () => {
      const reported: Array<[unknown, unknown]> = [];
      const fanOut = createFanOut<number>((error, context) => reported.push([error, context]));
      const heard: number[] = [];
      const bug = new TypeError("bug");
      fanOut.subscribe(() => {
        throw bug;
      });
      fanOut.subscribe((value) => heard.push(value));
      fanOut.emit(1);
      fanOut.emit(2);
      expect(heard).toEqual([1, 2]);
      expect(reported).toEqual([
        [bug, { during: "listener" }],
        [bug, { during: "listener" }],
      ]);
    });
  });

  describe("when a listener unsubscribes while an event goes out", () => {
    it("should give that event to every listener subscribed when it was emitted, and none after", () => {
      const fanOut = createFanOut<number>();
      const heard: string[] = [];
      const second = (value: number) => heard.push(`second ${value}`);
      let unsubscribeSecond: () => void = () => undefined;
      fanOut.subscribe((value) => {
        heard.push(`first ${value}`);
        unsubscribeSecond();
      });
      unsubscribeSecond = fanOut.subscribe(second);
      fanOut.emit(1);
      fanOut.emit(2);
      expect(heard).toEqual(["first 1", "second 1", "first 2"]);
    });
  });
});
