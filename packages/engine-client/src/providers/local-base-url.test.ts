import { describe, expect, it } from "vitest";
import { isLocalBaseURL } from "./local-base-url.js";

describe("isLocalBaseURL", () => {
  describe("given a loopback host", () => {
    it.each([
      "http://localhost:11434",
      "http://LOCALHOST:1234/v1",
      "http://ollama.localhost",
      "http://127.0.0.1:8080/v1",
      "http://127.1.2.3",
      "http://[::1]:8000/v1",
      "http://0.0.0.0:8000",
      "http://[::ffff:127.0.0.1]:8000",
    ])("should say %s is on this computer", (url) => {
      expect(isLocalBaseURL(url)).toBe(true);
    });
  });

  describe("given another host or something that is not a URL", () => {
    it.each([
      "https://api.openai.com/v1",
      "http://192.168.1.20:11434",
      "http://10.0.0.5:8000/v1",
      "http://127.0.0.1.example.com",
      "http://localhost.example.com",
      "not a url",
      "",
    ])("should say %s is not", (url) => {
      expect(isLocalBaseURL(url)).toBe(false);
    });
  });
});
