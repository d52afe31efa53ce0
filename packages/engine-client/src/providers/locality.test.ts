import { afterEach, describe, expect, it, vi } from "vitest";
import { createProvider } from "./create-provider.js";

describe("a provider's locality", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("given a page on localhost whose server passes calls on, should come from the provider, not the page's URL", () => {
    vi.stubGlobal("location", { origin: "http://localhost:5174" });
    const proxy = "http://localhost:5174/provider/v1";

    expect(createProvider("openrouter", { baseURL: proxy }).local).toBe(false);
    expect(createProvider("openai", { baseURL: proxy }).local).toBe(false);
    expect(createProvider("ollama", { baseURL: "http://localhost:5174/ollama" }).local).toBe(true);
    // A server on this computer at another origin is still taken for local.
    expect(createProvider("vllm", { baseURL: "http://127.0.0.1:8080/v1" }).local).toBe(true);
    // What the host says wins.
    expect(createProvider("openrouter", { baseURL: proxy, local: true }).local).toBe(true);
  });

  it("given no page, should still take a loopback host for a server on this computer", () => {
    expect(createProvider("vllm", { baseURL: "http://localhost:5174/v1" }).local).toBe(true);
  });
});
