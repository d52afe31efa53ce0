import { describe, expect, it } from "vitest";
import { allModelWeights, familyWeights, tokenFamilies, weightsFor } from "./estimate.js";

describe("weightsFor", () => {
  describe("given a family name", () => {
    it.each(tokenFamilies.map((family) => ({ family })))("should give the $family table", ({ family }) => {
      expect(weightsFor(family)).toBe(familyWeights[family]);
    });

    it.each([
      { family: undefined, why: "no family" },
      { family: "claude-4", why: "an unmeasured tokenizer" },
      { family: "toString", why: "a name inherited by every object" },
    ])("should give the all-model table for $why", ({ family }) => {
      expect(weightsFor(family)).toBe(allModelWeights);
    });
  });
});
