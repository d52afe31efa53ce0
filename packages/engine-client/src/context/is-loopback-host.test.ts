import { describe, expect, it } from "vitest";
import { isLoopbackHost } from "./window.js";

describe("isLoopbackHost", () => {
  describe("given a host name", () => {
    it.each([
      { host: "localhost", expected: true },
      { host: "LOCALHOST", expected: true },
      { host: "ollama.localhost", expected: true },
      { host: "127.0.0.1", expected: true },
      { host: "127.1.2.3", expected: true },
      { host: "[::1]", expected: true },
      { host: "::ffff:127.0.0.1", expected: true },
      { host: "[::ffff:7f00:1]", expected: true },
      { host: "::ffff:c0a8:10a", expected: false },
      { host: "0.0.0.0", expected: true },
      { host: "192.168.1.10", expected: false },
      { host: "localhost.example.com", expected: false },
      { host: "api.openai.com", expected: false },
    ])("should say $expected for $host", ({ host, expected }) => {
      expect(isLoopbackHost(host)).toBe(expected);
    });
  });
});
