import { describe, expect, it } from "vitest";
import { createLimitCounter } from "./limits.js";

describe("createLimitCounter (issue #28, fault 6)", () => {
  it("given no limits, should keep nothing however many turns and tokens are counted", () => {
    const counter = createLimitCounter(undefined);
    for (let index = 0; index < 10_000; index++) {
      counter.countTurn("p");
      counter.countTokens("p", 100);
    }
    expect(counter.retryAfter("p")).toBe(0);
    expect(counter.held()).toBe(0);
  });

  it("given limits, should keep a bounded window of buckets over a day of turns, and still refuse past the limit", () => {
    let now = 0;
    const counter = createLimitCounter({ turnsPerMinute: 10, inputTokensPerDay: 1_000_000 }, () => now);
    // A turn every 10 s for a day: 8,640 turns, 8,640 token counts.
    for (let index = 0; index < 8_640; index++) {
      now += 10_000;
      counter.countTurn("p");
      counter.countTokens("p", 10);
    }
    // A minute of seconds and a day of quarter hours, at most.
    expect(counter.held()).toBeLessThanOrEqual(61 + 97);
    for (let index = 0; index < 10; index++) counter.countTurn("q");
    const wait = counter.retryAfter("q");
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    now += wait * 1000;
    expect(counter.retryAfter("q")).toBe(0);
  });

  it("given tokens over the day's limit, should say when enough has left the window", () => {
    let now = 0;
    const counter = createLimitCounter({ inputTokensPerDay: 1000 }, () => now);
    counter.countTokens("p", 600);
    now += 3_600_000;
    counter.countTokens("p", 600);
    const wait = counter.retryAfter("p");
    expect(wait).toBeGreaterThan(22 * 3600 - 900);
    expect(wait).toBeLessThanOrEqual(23 * 3600 + 1);
    expect(counter.retryAfter("p", { tokensOnly: true })).toBe(wait);
    now += wait * 1000;
    expect(counter.retryAfter("p")).toBe(0);
  });
});
