import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../messages.js";
import { createProvider } from "../providers/create-provider.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { emptyChatRuntime } from "./chat-state.js";
import { createEngineParts } from "./engine-parts.js";
import { contextUsageOf, planFor, sizeRequest } from "./sizing.js";

const huge: ModelInfo = {
  id: "huge",
  displayName: "Huge",
  ready: true,
  local: false,
  provider: "openai",
  context: 1_000_000,
};

function partsFor(model: string, models: readonly ModelInfo[] = [huge]) {
  // No request leaves: the model list is given and sizing never calls the provider.
  const provider = createProvider("openai", { apiKey: "unused", baseURL: "http://127.0.0.1:9/v1" });
  return createEngineParts({ provider, model, store: createMemoryChatStore(), models, systemPrompt: "Be brief." });
}

describe("sizeRequest", () => {
  it("should keep the model's window apart from the budget the 100K cap bounds", async () => {
    const size = await sizeRequest(partsFor("huge"), emptyChatRuntime("c"));
    expect(size.budget.window).toBe(1_000_000);
    expect(size.budget.budget).toBe(100_000);
    expect(size.budget.uncapped).toBeGreaterThan(100_000);
    expect(size.systemTokens).toBeGreaterThan(0);
  });

  it("should size with a window a refusal just named, when it is smaller than the listed one", async () => {
    const size = await sizeRequest(partsFor("huge"), emptyChatRuntime("c"), 16_000);
    expect(size.budget.window).toBe(16_000);
    expect(size.budget.budget).toBeLessThan(16_000 * 0.9);
  });

  it("should use the chat's lowered answer room and its factor for the model", async () => {
    const rt = emptyChatRuntime("c");
    rt.answerRooms.huge = 2_000;
    rt.factor = { modelId: "huge", factor: 1.4 };
    const size = await sizeRequest(partsFor("huge"), rt);
    expect(size.budget.answerRoom).toBe(2_000);
    expect(size.factor).toBe(1.4);
    rt.factor = { modelId: "other", factor: 1.4 };
    expect((await sizeRequest(partsFor("huge"), rt)).factor).toBe(1);
  });
});

describe("contextUsageOf", () => {
  it("should measure against the window, not the budget", async () => {
    const rt = emptyChatRuntime("c");
    rt.log = [{ seq: 0, role: "user", parts: [{ type: "text", text: "Hello there" }], createdAt: 1 }];
    const size = await sizeRequest(partsFor("huge"), rt);
    const usage = contextUsageOf(size, planFor(rt, size, "auto"));
    expect(usage.window).toBe(1_000_000);
    expect(usage.budget).toBe(100_000);
    expect(usage.usedTokens).toBeGreaterThan(0);
    expect(usage.share).toBeCloseTo(usage.usedTokens / 1_000_000);
  });
});
