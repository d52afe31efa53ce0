import { createServer } from "node:net";
import { type FakeDialect, type FakeProvider, type FakeProviderOptions, startFakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderCallError } from "../errors.js";
import { textMessage } from "../messages.js";
import { createProvider } from "./create-provider.js";
import type { ProviderAdapter, ProviderStreamPart } from "./provider-adapter.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: FakeProviderOptions): Promise<FakeProvider> {
  const server = await startFakeProvider(options);
  servers.push(server);
  return server;
}

async function startFor(dialect: FakeDialect, options: Partial<FakeProviderOptions> = {}) {
  const server = await start({
    dialect,
    models: [{ id: "m", window: 100_000 }],
    reply: { text: "A fairly long answer that arrives in several pieces." },
    chunkSize: 8,
    ...options,
  });
  // The dialects are named after their providers.
  const adapter = createProvider(dialect, {
    baseURL: dialect === "ollama" ? server.origin : server.baseURL,
    ...(options.apiKey && { apiKey: "wrong-key" }),
  });
  return { server, adapter };
}

async function outcome(
  stream: AsyncIterable<ProviderStreamPart>,
): Promise<{ parts: ProviderStreamPart[]; error: unknown }> {
  const parts: ProviderStreamPart[] = [];
  try {
    for await (const part of stream) parts.push(part);
  } catch (error) {
    return { parts, error };
  }
  return { parts, error: undefined };
}

function ask(adapter: ProviderAdapter, extra: { abortSignal?: AbortSignal; timeoutMs?: number; model?: string } = {}) {
  return adapter.streamChat({ model: "m", messages: [textMessage(0, "user", "hello")], timeoutMs: 5000, ...extra });
}

const dialects: readonly FakeDialect[] = ["openai", "anthropic", "google", "ollama"];

describe.each(dialects.map((dialect) => [dialect] as const))("given the %s dialect", (dialect) => {
  describe("when the stream holds malformed JSON", () => {
    it("should throw a provider-error, never crash", async () => {
      const { server, adapter } = await startFor(dialect);
      server.failNext(1, "malformed-json");
      const { error } = await outcome(ask(adapter));
      expect(ProviderCallError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ problem: { kind: "provider-error", next: { type: "retry" } }, tooLong: null });
    });
  });

  describe("when the stream stops before the answer is complete", () => {
    it("should throw a provider-error that says output had already arrived", async () => {
      const { server, adapter } = await startFor(dialect);
      server.failNext(1, "truncated-stream");
      const { parts, error } = await outcome(ask(adapter));
      expect(parts.some((part) => part.type === "text-delta")).toBe(true);
      expect(error).toMatchObject({ problem: { kind: "provider-error" }, afterOutput: true });
      expect((error as ProviderCallError).isRetryable).toBe(true);
    });
  });

  describe("when the server answers 500", () => {
    it("should throw a retryable provider-error with the provider's words and status", async () => {
      const { server, adapter } = await startFor(dialect);
      server.failNext(1, "http-500");
      const { error } = await outcome(ask(adapter));
      expect(error).toMatchObject({
        problem: { kind: "provider-error", status: 500 },
        status: 500,
        afterOutput: false,
      });
      expect((error as ProviderCallError).problem.providerMessage).toBeTruthy();
      expect((error as ProviderCallError).responseBody).toBeTruthy();
      expect((error as ProviderCallError).isRetryable).toBe(true);
    });
  });

  describe("when the connection is reset before any answer", () => {
    it("should throw offline", async () => {
      const { server, adapter } = await startFor(dialect);
      server.failNext(1, "connection-reset");
      const { error } = await outcome(ask(adapter));
      expect(error).toMatchObject({ problem: { kind: "offline", next: { type: "retry" } }, afterOutput: false });
    });
  });

  describe("when the connection is reset in the middle of the answer", () => {
    it("should throw offline, after output", async () => {
      const { server, adapter } = await startFor(dialect);
      server.failNext(1, "reset-mid-stream");
      const { error } = await outcome(ask(adapter));
      expect(error).toMatchObject({ problem: { kind: "offline" }, afterOutput: true });
    });
  });

  describe("when the server is slower than the timeout", () => {
    it("should throw offline when the idle timeout passes, without hanging", async () => {
      const { server, adapter } = await startFor(dialect);
      server.failNext(1, { type: "slow", delayMs: 20_000 });
      const { error } = await outcome(ask(adapter, { timeoutMs: 150 }));
      expect(error).toMatchObject({ problem: { kind: "offline" } });
    });
  });

  describe("when the server goes quiet in the middle of the answer", () => {
    it("should throw offline once the idle timeout passes between two pieces", async () => {
      const { adapter } = await startFor(dialect, { chunkDelayMs: 2_000 });
      const { parts, error } = await outcome(ask(adapter, { timeoutMs: 150 }));
      // Gemini and Ollama send text in their first piece; OpenAI and Anthropic open with a role or start event.
      const textArrived = parts.some((part) => part.type === "text-delta");
      expect(textArrived).toBe(dialect === "google" || dialect === "ollama");
      expect(error).toMatchObject({ problem: { kind: "offline" }, afterOutput: textArrived });
    });
  });

  describe("when the caller aborts in the middle of the answer", () => {
    it("should pass the AbortError through, not a problem", async () => {
      const { adapter } = await startFor(dialect, { chunkDelayMs: 20, reply: { text: "x".repeat(400) } });
      const controller = new AbortController();
      const parts: ProviderStreamPart[] = [];
      let caught: unknown;
      try {
        for await (const part of ask(adapter, { abortSignal: controller.signal })) {
          parts.push(part);
          if (part.type === "text-delta") controller.abort();
        }
      } catch (error) {
        caught = error;
      }
      expect(ProviderCallError.isInstance(caught)).toBe(false);
      expect((caught as Error).name).toBe("AbortError");
    });
  });

  describe("when the key is wrong", () => {
    it("should throw auth, pointing at the provider settings", async () => {
      const { adapter } = await startFor(dialect, { apiKey: "right-key" });
      const { error } = await outcome(ask(adapter));
      expect(error).toMatchObject({ problem: { kind: "auth", next: { type: "open-settings", section: "provider" } } });
    });
  });

  describe("when the model is unknown", () => {
    it("should throw model-unavailable", async () => {
      const { adapter } = await startFor(dialect);
      const { error } = await outcome(ask(adapter, { model: "no-such-model" }));
      expect(error).toMatchObject({ problem: { kind: "model-unavailable" }, model: "no-such-model" });
    });
  });

  describe("when the model list is malformed, failing or slow", () => {
    it("should throw provider-error, provider-error and offline", async () => {
      const { server, adapter } = await startFor(dialect);
      server.failNext(1, "malformed-json", { on: "models" });
      await expect(adapter.listModels({ timeoutMs: 5000 })).rejects.toMatchObject({
        problem: { kind: "provider-error" },
      });
      server.failNext(1, "http-500", { on: "models" });
      await expect(adapter.listModels({ timeoutMs: 5000 })).rejects.toMatchObject({
        problem: { kind: "provider-error", status: 500 },
      });
      server.failNext(1, { type: "slow", delayMs: 20_000 }, { on: "models" });
      await expect(adapter.listModels({ timeoutMs: 150 })).rejects.toMatchObject({ problem: { kind: "offline" } });
    });
  });
});

describe("given the openai dialect's other error statuses", () => {
  it("should map 429 with retry-after to rate-limited with the seconds to wait", async () => {
    const { server, adapter } = await startFor("openai");
    server.failNext(1, {
      type: "status",
      status: 429,
      body: { error: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" } },
      headers: { "retry-after": "7" },
    });
    const { error } = await outcome(ask(adapter));
    expect(error).toMatchObject({ problem: { kind: "rate-limited", next: { type: "retry-after", seconds: 7 } } });
    expect((error as ProviderCallError).isRetryable).toBe(true);
  });

  it("should map 429 insufficient_quota to quota, pointing at billing", async () => {
    const { server, adapter } = await startFor("openai");
    server.failNext(1, {
      type: "status",
      status: 429,
      body: {
        error: {
          message: "You exceeded your current quota, please check your plan and billing details.",
          type: "insufficient_quota",
          code: "insufficient_quota",
        },
      },
    });
    const { error } = await outcome(ask(adapter));
    expect(error).toMatchObject({ problem: { kind: "quota", next: { type: "open-settings", section: "billing" } } });
  });

  it("should map a content-policy refusal to refused", async () => {
    const { server, adapter } = await startFor("openai");
    server.failNext(1, {
      type: "status",
      status: 400,
      body: {
        error: {
          message: "Your request was rejected as a result of our safety system.",
          type: "invalid_request_error",
          code: "content_policy_violation",
        },
      },
    });
    const { error } = await outcome(ask(adapter));
    expect(error).toMatchObject({ problem: { kind: "refused" } });
  });

  it("should map Anthropic's credit balance to quota", async () => {
    const { server, adapter } = await startFor("anthropic");
    server.failNext(1, {
      type: "status",
      status: 400,
      body: {
        type: "error",
        error: {
          type: "invalid_request_error",
          message: "Your credit balance is too low to access the Anthropic API.",
        },
      },
    });
    const { error } = await outcome(ask(adapter));
    expect(error).toMatchObject({ problem: { kind: "quota" } });
  });

  it("should throw offline when nothing listens at the base URL", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const adapter = createProvider("openai", { baseURL: `http://127.0.0.1:${port}/v1` });
    const { error } = await outcome(ask(adapter));
    expect(error).toMatchObject({ problem: { kind: "offline" }, afterOutput: false });
    await expect(adapter.listModels({ timeoutMs: 2000 })).rejects.toMatchObject({ problem: { kind: "offline" } });
  });

  it("should throw the AbortError at once when the signal is already aborted, sending nothing", async () => {
    const { server, adapter } = await startFor("openai");
    const controller = new AbortController();
    controller.abort();
    const { error } = await outcome(ask(adapter, { abortSignal: controller.signal }));
    expect((error as Error).name).toBe("AbortError");
    await expect(adapter.listModels({ abortSignal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
    expect(server.requests).toHaveLength(0);
  });

  it("should throw the AbortError when aborted while the server is still silent", async () => {
    const { server, adapter } = await startFor("openai");
    server.failNext(1, { type: "slow", delayMs: 20_000 });
    const controller = new AbortController();
    const pending = outcome(ask(adapter, { abortSignal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const { error } = await pending;
    expect(ProviderCallError.isInstance(error)).toBe(false);
    expect((error as Error).name).toBe("AbortError");
  });
});
