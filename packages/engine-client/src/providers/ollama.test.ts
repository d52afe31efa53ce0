import { type FakeProvider, type FakeProviderOptions, startFakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderCallError } from "../errors.js";
import { textMessage } from "../messages.js";
import { createOllama } from "./ollama.js";
import type { ProviderStreamPart } from "./provider-adapter.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: FakeProviderOptions): Promise<FakeProvider> {
  const server = await startFakeProvider(options);
  servers.push(server);
  return server;
}

async function collect(stream: AsyncIterable<ProviderStreamPart>): Promise<ProviderStreamPart[]> {
  const parts: ProviderStreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe("createOllama", () => {
  describe("given models that could read more or less than the window this library asks for", () => {
    it("should report the num_ctx it asks for (16K by default), never more than /api/show says", async () => {
      const server = await start({
        dialect: "ollama",
        models: [
          { id: "llama3.1:8b", advertisedWindow: 131_072 },
          { id: "llama3:8b", advertisedWindow: 8192 },
        ],
      });
      const adapter = createOllama({ baseURL: server.origin });
      const models = await adapter.listModels({ timeoutMs: 5000 });
      expect(models.map(({ id, context, local, ready }) => ({ id, context, local, ready }))).toEqual([
        { id: "llama3.1:8b", context: 16_384, local: true, ready: true },
        { id: "llama3:8b", context: 8192, local: true, ready: true },
      ]);
      expect(server.requests.filter((request) => request.path === "/api/show")).toHaveLength(2);
    });

    it("should use the window chosen in the settings", async () => {
      const server = await start({ dialect: "ollama", models: [{ id: "qwen3:14b", advertisedWindow: 40_960 }] });
      const adapter = createOllama({
        baseURL: server.origin,
        contextWindow: ({ trainedWindow }) => Math.min(32_768, trainedWindow ?? 8192),
      });
      expect((await adapter.listModels({ timeoutMs: 5000 }))[0]?.context).toBe(32_768);
    });
  });

  describe("given the address of its OpenAI-style API (ending in /v1)", () => {
    it("should reach its own API at the server's root", async () => {
      const server = await start({ dialect: "ollama", models: [{ id: "llama3:8b", advertisedWindow: 8192 }] });
      const adapter = createOllama({ baseURL: `${server.origin}/v1/` });
      const models = await adapter.listModels({ timeoutMs: 5000 });
      expect(models.map(({ id, context }) => ({ id, context }))).toEqual([{ id: "llama3:8b", context: 8192 }]);
      await collect(adapter.streamChat({ model: "llama3:8b", messages: [textMessage(0, "user", "hello")] }));
      const paths = server.requests.map((request) => request.path);
      expect(paths.filter((path) => !path.startsWith("/api/"))).toEqual([]);
      expect(paths).toContain("/api/chat");
    });
  });

  describe("given a streamed answer over NDJSON", () => {
    it("should send num_ctx and truncate:false, and stream thinking, text, tool calls and usage", async () => {
      const server = await start({
        dialect: "ollama",
        models: [{ id: "qwen3:8b", advertisedWindow: 40_960 }],
        reply: {
          thinking: "Tool time.",
          text: "One moment.",
          toolCalls: [{ name: "weather", arguments: { city: "Lima" } }],
          usage: { inputTokens: 300, outputTokens: 12 },
        },
      });
      const adapter = createOllama({ baseURL: server.origin });
      const parts = await collect(
        adapter.streamChat({
          model: "qwen3:8b",
          system: "Be brief.",
          messages: [textMessage(0, "user", "Lima?")],
          tools: [{ name: "weather", parameters: { type: "object" } }],
          maxOutputTokens: 1000,
          timeoutMs: 5000,
        }),
      );
      expect(parts.map((part) => (part.type === "thinking-delta" ? part.delta : "")).join("")).toBe("Tool time.");
      expect(parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("")).toBe("One moment.");
      expect(parts.find((part) => part.type === "tool-call")).toMatchObject({
        name: "weather",
        arguments: '{"city":"Lima"}',
      });
      expect(parts.slice(-2)).toEqual([
        { type: "usage", usage: { inputTokens: 300, outputTokens: 12, cachedInputTokens: 0 } },
        { type: "finish", reason: "tool-calls" },
      ]);
      expect(server.chatRequests()[0]?.body).toMatchObject({
        model: "qwen3:8b",
        stream: true,
        truncate: false,
        options: { num_ctx: 16_384, num_predict: 1000 },
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Lima?" },
        ],
      });
    });

    it("should read a long answer whole, its lines cut anywhere by the body's pieces", async () => {
      // About 1,550 NDJSON lines (some 190 KB) in a row: the body arrives in pieces that end mid-line.
      const text = Array.from({ length: 1_500 }, (_, index) => `word${index} `).join("");
      const server = await start({ dialect: "ollama", models: [{ id: "m" }], chunkSize: 8, reply: { text } });
      const adapter = createOllama({ baseURL: server.origin });
      const parts = await collect(
        adapter.streamChat({ model: "m", messages: [textMessage(0, "user", "hi")], contextWindow: 4096 }),
      );
      expect(parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("")).toBe(text);
      expect(parts.at(-1)).toEqual({ type: "finish", reason: "stop" });
    });

    it("should ask for the request's own contextWindow when given", async () => {
      const server = await start({ dialect: "ollama", models: [{ id: "m", advertisedWindow: 131_072 }] });
      const adapter = createOllama({ baseURL: server.origin });
      await collect(
        adapter.streamChat({
          model: "m",
          messages: [textMessage(0, "user", "hi")],
          contextWindow: 4096,
          timeoutMs: 5000,
        }),
      );
      expect(server.chatRequests()[0]?.body).toMatchObject({ options: { num_ctx: 4096 } });
    });
  });

  describe("given a prompt over the num_ctx asked for", () => {
    it("should throw a too-long ProviderCallError (Ollama names the excess, not the window)", async () => {
      const server = await start({ dialect: "ollama", models: [{ id: "m", advertisedWindow: 131_072 }] });
      const adapter = createOllama({ baseURL: server.origin });
      const error = await collect(
        adapter.streamChat({
          model: "m",
          messages: [textMessage(0, "user", "x".repeat(20_000))],
          contextWindow: 2048,
          timeoutMs: 5000,
        }),
      ).catch((caught: unknown) => caught);
      expect(ProviderCallError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ tooLong: { cause: "input" }, problem: { kind: "too-long" }, afterOutput: false });
      expect((error as ProviderCallError).tooLong?.window).toBeUndefined();
    });
  });
});
