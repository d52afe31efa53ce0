import { describe, expect, it } from "vitest";
import { unframeSummary } from "../context/frame.js";
import { chatLogFrom } from "../mock/long-chat.js";
import { buildHandoff } from "./handoff.js";

describe("buildHandoff", () => {
  const log = chatLogFrom(
    Array.from(
      { length: 50 },
      (_, index) => [`question ${index} ${"q".repeat(1000)}`, `answer ${index} ${"a".repeat(1000)}`] as const,
    ),
  );

  it("given a short chat, should carry every line and no summary", () => {
    const handoff = buildHandoff(log.slice(0, 4), "the summary");
    expect(handoff.messagesLeftOut).toBe(0);
    expect(handoff.summaryCarried).toBe(false);
    expect(handoff.text.startsWith("Person: question 0")).toBe(true);
  });

  it("given a long chat, should keep the newest 60,000 characters and carry the summary in front", () => {
    const handoff = buildHandoff(log, "Agreed: ship on Friday.");
    expect(handoff.messagesLeftOut).toBeGreaterThan(0);
    expect(handoff.summaryCarried).toBe(true);
    const framed = unframeSummary(handoff.text);
    expect(framed?.summary).toBe("Agreed: ship on Friday.");
    expect(framed?.rest.length).toBeLessThanOrEqual(60_000);
    expect(framed?.rest.endsWith("a".repeat(1000))).toBe(true);
    expect(framed?.rest).toContain("answer 49");
    expect(framed?.rest.startsWith("Person: ") || framed?.rest.startsWith("Assistant: ")).toBe(true);
  });

  it("given lines left out and no summary, should hand over the lines alone", () => {
    const handoff = buildHandoff(log, null);
    expect(handoff.summaryCarried).toBe(false);
    expect(unframeSummary(handoff.text)).toBeNull();
  });

  it("given one message longer than the limit, should carry its end", () => {
    const giant = chatLogFrom([[`${"x".repeat(100)}END`, "ok"]]);
    const handoff = buildHandoff(giant.slice(0, 1), "s", { maxChars: 50 });
    expect(handoff.text.endsWith("END")).toBe(true);
    expect(handoff.summaryCarried).toBe(true);
    expect(unframeSummary(handoff.text)?.rest.length).toBeLessThanOrEqual(50);
  });
});
