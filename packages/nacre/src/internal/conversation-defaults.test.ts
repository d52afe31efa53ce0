import { describe, expect, it } from "vitest";
import { preferPassed } from "./conversation-defaults.js";

describe("preferPassed", () => {
  it("given a prop the caller passed, should keep the caller's value", () => {
    expect(preferPassed({ summary: "theirs" }, { summary: "own" })).toEqual({ summary: "theirs" });
  });

  it("given a prop passed as undefined, should use the conversation's own", () => {
    expect(preferPassed({ summary: undefined }, { summary: "own" })).toEqual({ summary: "own" });
  });

  it("given a prop left out, should use the conversation's own", () => {
    expect(preferPassed({ className: "x" } as { className: string; summary?: string }, { summary: "own" })).toEqual({
      className: "x",
      summary: "own",
    });
  });

  it("given null, should keep null (none, on purpose)", () => {
    expect(preferPassed({ summary: null }, { summary: "own" })).toEqual({ summary: null });
  });

  it("given other props, should pass them through, undefined ones too", () => {
    expect(preferPassed({ id: "a", title: undefined }, { summary: "own" })).toEqual({
      id: "a",
      title: undefined,
      summary: "own",
    });
  });
});
