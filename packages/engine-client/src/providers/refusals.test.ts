import {
  type FakeDialect,
  type FakeOpenAIRow,
  type FakeProvider,
  type FakeProviderOptions,
  loadProviderErrorBodies,
  startFakeProvider,
} from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderCallError } from "../errors.js";
import { textMessage } from "../messages.js";
import { createProvider } from "./create-provider.js";
import { isProviderId, type ProviderAdapter, type ProviderId, type ProviderStreamPart } from "./provider-adapter.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: FakeProviderOptions): Promise<FakeProvider> {
  const server = await startFakeProvider(options);
  servers.push(server);
  return server;
}

/** The fake server's dialect and row, and the adapter, for a provider id of bodies.json. */
function targetFor(provider: string): { id: ProviderId; dialect: FakeDialect; row?: FakeOpenAIRow } {
  const id = provider === "google-vertex" ? "google" : provider;
  if (!isProviderId(id)) throw new Error(`no adapter for ${provider}`);
  if (id === "anthropic" || id === "google" || id === "ollama") return { id, dialect: id };
  return { id, dialect: "openai", row: id };
}

async function startFor(provider: string, options: Partial<FakeProviderOptions> = {}) {
  const target = targetFor(provider);
  const server = await start({
    dialect: target.dialect,
    ...(target.row && { row: target.row }),
    models: [{ id: "m", window: 4096 }],
    ...options,
  });
  const adapter = createProvider(target.id, {
    baseURL: target.dialect === "ollama" ? server.origin : server.baseURL,
  });
  return { server, adapter };
}

async function failureOf(stream: AsyncIterable<ProviderStreamPart>): Promise<unknown> {
  try {
    for await (const _part of stream) {
      // drain
    }
  } catch (error) {
    return error;
  }
  return undefined;
}

function ask(adapter: ProviderAdapter, text = "hello", extra: { maxOutputTokens?: number } = {}) {
  return adapter.streamChat({ model: "m", messages: [textMessage(0, "user", text)], timeoutMs: 5000, ...extra });
}

const entries = loadProviderErrorBodies();

/**
 * bodies.json labels one request bigger than a per-minute limit (`Limit 30000, Requested 30601`) a near miss;
 * it can never pass as sent, so it heals like "too long" with that limit as the window.
 */
function perMinuteLimitBelowRequest(body: string): number | null {
  const match = /Limit (\d+), Requested (\d+)/.exec(body);
  return match && Number(match[2]) > Number(match[1]) ? Number(match[1]) : null;
}

describe("refusals replayed over HTTP from bodies.json", () => {
  describe.each(
    entries
      .filter((entry) => entry.kind === "too-long")
      .map((entry) => [`#${entry.index} ${entry.provider}`, entry] as const),
  )("given the too-long body %s", (_name, entry) => {
    it("should throw a too-long ProviderCallError with the window the body names, before any output", async () => {
      const { server, adapter } = await startFor(entry.provider);
      server.refuseNext(1, entry.index);
      const error = await failureOf(ask(adapter));
      expect(ProviderCallError.isInstance(error)).toBe(true);
      const failure = error as ProviderCallError;
      expect(failure.problem.kind).toBe("too-long");
      expect(failure.tooLong?.window ?? null).toBe(entry.window);
      expect(failure.problem.kind === "too-long" && failure.problem.window).toBe(entry.window ?? undefined);
      expect(failure.afterOutput).toBe(false);
      expect(failure.isRetryable).toBe(false);
      expect(failure.status).toBe(entry.status ?? 400);
    });
  });

  describe.each(
    entries
      .filter((entry) => entry.kind === "not-too-long" && perMinuteLimitBelowRequest(entry.body) === null)
      .map((entry) => [`#${entry.index} ${entry.provider}`, entry] as const),
  )("given the not-too-long body %s", (_name, entry) => {
    it("should throw a ProviderCallError that is not too-long and learn no window", async () => {
      const { server, adapter } = await startFor(entry.provider);
      server.refuseNext(1, entry.index);
      const error = await failureOf(ask(adapter));
      expect(ProviderCallError.isInstance(error)).toBe(true);
      expect((error as ProviderCallError).tooLong).toBeNull();
      expect((error as ProviderCallError).problem.kind).not.toBe("too-long");
      expect(adapter.windows.get(adapter.provider, "m")).toBeUndefined();
    });
  });

  describe.each(
    entries
      .filter((entry) => perMinuteLimitBelowRequest(entry.body) !== null)
      .map((entry) => [`#${entry.index} ${entry.provider}`, entry] as const),
  )("given %s, one request bigger than the per-minute limit", (_name, entry) => {
    it("should throw a too-long ProviderCallError with the per-minute limit as the window, and remember it", async () => {
      const { server, adapter } = await startFor(entry.provider);
      server.refuseNext(1, entry.index);
      const error = await failureOf(ask(adapter));
      const limit = perMinuteLimitBelowRequest(entry.body);
      expect(error).toMatchObject({ problem: { kind: "too-long", window: limit }, tooLong: { window: limit } });
      expect(adapter.windows.get(adapter.provider, "m")).toBe(limit);
    });
  });

  describe("given the near misses' own kinds", () => {
    it.each([
      [12, "rate-limited"],
      [17, "rate-limited"],
      [48, "quota"],
      [49, "quota"],
      [5, "provider-error"],
      [24, "provider-error"],
    ] as const)("should map bodies.json #%i to %s", async (index, kind) => {
      const entry = entries[index];
      if (!entry) throw new Error(`no entry ${index}`);
      const { server, adapter } = await startFor(entry.provider);
      server.refuseNext(1, index);
      const error = await failureOf(ask(adapter));
      expect((error as ProviderCallError).problem.kind).toBe(kind);
    });
  });

  describe.each(["openai", "anthropic", "google", "ollama", "openrouter", "lmstudio", "llama.cpp"] as const)(
    "given %s sending its refusal inside an OK stream (an SSE error event or an NDJSON error line)",
    (provider) => {
      it("should recognise it as too long", async () => {
        const { server, adapter } = await startFor(provider);
        server.refuseNext(1, provider, { via: "stream-error" });
        const error = await failureOf(ask(adapter));
        expect(ProviderCallError.isInstance(error)).toBe(true);
        expect((error as ProviderCallError).problem.kind).toBe("too-long");
      });
    },
  );

  describe("given z.ai accepting an oversized prompt and finishing with model_context_window_exceeded", () => {
    it("should throw a too-long ProviderCallError", async () => {
      const { adapter } = await startFor("zhipu", { reply: { finishReason: "model_context_window_exceeded" } });
      const error = await failureOf(ask(adapter));
      expect(error).toMatchObject({ problem: { kind: "too-long" }, tooLong: { cause: "input" }, afterOutput: false });
    });
  });
});

const windowNamed: Readonly<Record<ProviderId, boolean>> = {
  openai: true,
  anthropic: true,
  google: true,
  mistral: true,
  deepseek: true,
  xai: true,
  groq: false,
  together: true,
  vllm: true,
  "llama.cpp": true,
  lmstudio: true,
  openrouter: true,
  ollama: false,
  zhipu: false,
};

describe("a prompt over the model's window, refused by the fake server in the provider's real words", () => {
  describe.each(Object.entries(windowNamed).map(([provider, named]) => [provider, named] as const))(
    "given %s",
    (provider, named) => {
      it("should be too long, and the window it names is remembered and wins in the model list", async () => {
        const { adapter } = await startFor(provider);
        const error = await failureOf(
          adapter.streamChat({
            model: "m",
            messages: [textMessage(0, "user", "word ".repeat(8000))],
            ...(provider === "ollama" && { contextWindow: 4096 }),
            timeoutMs: 5000,
          }),
        );
        expect(error).toMatchObject({ problem: { kind: "too-long" }, tooLong: { cause: "input" } });
        const window = (error as ProviderCallError).tooLong?.window;
        expect(window).toBe(named ? 4096 : undefined);
        expect(adapter.windows.get(provider, "m")).toBe(named ? 4096 : undefined);
        if (named) {
          const listed = await adapter.listModels({ timeoutMs: 5000 });
          expect(listed.find((model) => model.id === "m")?.context).toBe(4096);
        }
      });
    },
  );

  describe.each(["openai", "anthropic", "deepseek", "vllm", "openrouter"] as const)(
    "given %s and a small prompt with an answer room larger than the window",
    (provider) => {
      it("should say the output reservation caused it, with the prompt's size", async () => {
        const { adapter } = await startFor(provider);
        const error = await failureOf(ask(adapter, "short question", { maxOutputTokens: 8192 }));
        expect(error).toMatchObject({
          problem: { kind: "too-long", window: 4096 },
          tooLong: { window: 4096, cause: "output" },
        });
        expect((error as ProviderCallError).tooLong?.inputTokens).toBeLessThan(100);
      });
    },
  );
});
