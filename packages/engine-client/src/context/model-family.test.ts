import { describe, expect, it } from "vitest";
import { modelFamily } from "./estimate.js";

describe("modelFamily", () => {
  describe("given a model id", () => {
    it.each([
      { id: "gpt-4o", expected: "o200k" },
      { id: "gpt-4o-mini", expected: "o200k" },
      { id: "openai/gpt-4.1", expected: "o200k" },
      { id: "gpt-5", expected: "o200k" },
      { id: "o3-mini", expected: "o200k" },
      { id: "o1", expected: "o200k" },
      { id: "gpt-oss:20b", expected: "o200k" },
      { id: "gpt-4-turbo", expected: "cl100k" },
      { id: "gpt-3.5-turbo", expected: "cl100k" },
      { id: "claude-2.1", expected: "claude-legacy" },
      { id: "claude-instant-1.2", expected: "claude-legacy" },
      { id: "claude-3-5-sonnet-latest", expected: undefined },
      { id: "claude-sonnet-4-5", expected: undefined },
      { id: "qwen3:8b", expected: "qwen3" },
      { id: "Qwen/Qwen2.5-Coder-32B-Instruct", expected: "qwen3" },
      { id: "qwen3.6-35b-a3b", expected: "qwen3" },
      { id: "gemma3:12b", expected: "gemma3" },
      { id: "google/gemma-3-27b-it", expected: "gemma3" },
      { id: "gemini-2.5-pro", expected: undefined },
      { id: "llama3.1:8b", expected: "llama3" },
      { id: "meta-llama/Llama-3.3-70B-Instruct", expected: "llama3" },
      { id: "llama4-scout", expected: undefined },
      { id: "deepseek-chat", expected: "deepseek-v3" },
      { id: "deepseek-reasoner", expected: "deepseek-v3" },
      { id: "deepseek-ai/DeepSeek-V3", expected: "deepseek-v3" },
      { id: "mistral:7b", expected: "mistral-v1" },
      { id: "open-mistral-7b", expected: "mistral-v1" },
      { id: "mistral-large-latest", expected: undefined },
      { id: "", expected: undefined },
    ])("should give $expected for $id", ({ id, expected }) => {
      expect(modelFamily(id)).toBe(expected);
    });
  });
});
