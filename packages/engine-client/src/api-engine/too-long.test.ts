import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../messages.js";
import { tooLongWithNextStep } from "./too-long.js";

function model(id: string, context: number | undefined, ready = true): ModelInfo {
  return { id, displayName: id, ready, local: false, provider: "openai", ...(context ? { context } : {}) };
}

describe("tooLongWithNextStep", () => {
  const base = { modelId: "small", window: 8_000, message: "My long question", providerMessage: "too long" };

  it("should offer the largest ready model that reads at least half as much again and takes the request", () => {
    const problem = tooLongWithNextStep({
      ...base,
      models: [model("small", 8_000), model("mid", 32_000), model("big", 128_000), model("off", 1_000_000, false)],
      neededTokens: 20_000,
    });
    expect(problem.kind).toBe("too-long");
    expect(problem.next).toEqual({ type: "switch-model", model: model("big", 128_000), readsTimes: 16 });
    expect(problem).toMatchObject({ window: 8_000, providerMessage: "too long" });
  });

  it("should offer a new chat carrying the message when no model takes it", () => {
    const problem = tooLongWithNextStep({
      ...base,
      models: [model("small", 8_000), model("slightly", 10_000), model("unlisted", undefined)],
      neededTokens: 20_000,
    });
    expect(problem.next).toEqual({ type: "new-chat", message: "My long question" });
  });
});
