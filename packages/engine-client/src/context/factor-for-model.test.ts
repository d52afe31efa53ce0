import { describe, expect, it } from "vitest";
import { factorForModel, initialFactor } from "./factor.js";

describe("factorForModel", () => {
  describe("given a recorded factor and the chat's model", () => {
    it.each([
      { name: "nothing recorded", recorded: null, modelId: "gpt-4o", expected: initialFactor },
      {
        name: "a factor of the same model",
        recorded: { modelId: "gpt-4o", factor: 1.3 },
        modelId: "gpt-4o",
        expected: 1.3,
      },
      {
        name: "a factor of another model (reset)",
        recorded: { modelId: "gpt-4o", factor: 1.3 },
        modelId: "qwen3:8b",
        expected: initialFactor,
      },
    ])("should give $expected for $name", ({ recorded, modelId, expected }) => {
      expect(factorForModel(recorded, modelId)).toBe(expected);
    });
  });
});
