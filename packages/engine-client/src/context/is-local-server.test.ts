import { describe, expect, it } from "vitest";
import { isLocalServer } from "./window.js";

describe("isLocalServer", () => {
  describe("given a provider's address or kind", () => {
    it.each([
      { server: { provider: "ollama" }, expected: true },
      { server: { provider: "LMStudio" }, expected: true },
      { server: { provider: "llama.cpp" }, expected: true },
      { server: { provider: "openai" }, expected: false },
      { server: { baseURL: "http://localhost:11434" }, expected: true },
      { server: { baseURL: "http://[::1]:1234/v1" }, expected: true },
      { server: { baseURL: "http://[::ffff:127.0.0.1]:8080" }, expected: true },
      { server: { baseURL: "https://api.openai.com/v1" }, expected: false },
      { server: { baseURL: "not a url" }, expected: false },
      { server: {}, expected: false },
    ])("should say $expected for $server", ({ server, expected }) => {
      expect(isLocalServer(server)).toBe(expected);
    });
  });
});
