import { describe, expect, it } from "vitest";
import { defaultApiWindow, defaultLocalWindow, resolveWindow, type WindowInput } from "./window.js";

const api = { local: false, provider: "openai" };
const ollama = { local: true, provider: "ollama" };

describe("resolveWindow", () => {
  describe("given what is known of the model", () => {
    it.each([
      {
        name: "the model's own window",
        input: { model: { ...api, context: 200_000 } },
        window: 200_000,
        source: "model",
      },
      {
        name: "an unknown window of a model API",
        input: { model: api },
        window: defaultApiWindow,
        source: "default-api",
      },
      { name: "nothing at all", input: {}, window: defaultApiWindow, source: "default-api" },
      {
        name: "an unknown window of a local model",
        input: { model: ollama },
        window: defaultLocalWindow,
        source: "default-local",
      },
      {
        name: "an unknown window of a local provider kind",
        input: { model: { local: false, provider: "lmstudio" } },
        window: defaultLocalWindow,
        source: "default-local",
      },
      {
        name: "an unknown window on a loopback host",
        input: { model: api, baseURL: "http://127.0.0.1:8080/v1" },
        window: defaultLocalWindow,
        source: "default-local",
      },
      {
        name: "an unknown window, said to be local",
        input: { model: api, local: true },
        window: defaultLocalWindow,
        source: "default-local",
      },
      {
        name: "a smaller window remembered from a refusal",
        input: { model: { ...api, context: 128_000 }, remembered: 8_192 },
        window: 8_192,
        source: "remembered",
      },
      {
        name: "a larger window remembered (the model's wins)",
        input: { model: { ...api, context: 32_000 }, remembered: 64_000 },
        window: 32_000,
        source: "model",
      },
      {
        name: "a remembered window below the local default",
        input: { model: ollama, remembered: 4_096 },
        window: 4_096,
        source: "remembered",
      },
      {
        name: "a meaningless window",
        input: { model: { ...api, context: 0 }, remembered: -1 },
        window: defaultApiWindow,
        source: "default-api",
      },
    ] satisfies { name: string; input: WindowInput; window: number; source: string }[])(
      "should use $name",
      ({ input, window, source }) => {
        expect(resolveWindow(input)).toEqual({ window, source });
      },
    );
  });
});
