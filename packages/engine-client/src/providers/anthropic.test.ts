import { type FakeProvider, type FakeProviderOptions, startFakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { type ChatMessage, textMessage } from "../messages.js";
import { createAnthropic } from "./anthropic.js";
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

describe("createAnthropic", () => {
  describe("given a model list with max_input_tokens", () => {
    it("should read each model's window from max_input_tokens, with the key in x-api-key", async () => {
      const server = await start({
        dialect: "anthropic",
        models: [
          { id: "claude-sonnet-4-5", window: 200_000, displayName: "Claude Sonnet 4.5" },
          { id: "claude-3-7-sonnet-20250219", displayName: "Claude 3.7 Sonnet" },
        ],
      });
      const adapter = createAnthropic({ baseURL: server.baseURL, apiKey: "sk-ant" });
      const models = await adapter.listModels({ timeoutMs: 5000 });
      expect(models).toEqual([
        {
          id: "claude-sonnet-4-5",
          displayName: "Claude Sonnet 4.5",
          context: 200_000,
          ready: true,
          local: true,
          provider: "anthropic",
        },
        // The older shape has no max_input_tokens: the window stays unknown.
        {
          id: "claude-3-7-sonnet-20250219",
          displayName: "Claude 3.7 Sonnet",
          ready: true,
          local: true,
          provider: "anthropic",
        },
      ]);
      expect(server.requests[0]?.headers).toMatchObject({ "x-api-key": "sk-ant", "anthropic-version": "2023-06-01" });
      expect(server.requests[0]?.query).toMatchObject({ limit: "1000" });
    });
  });

  describe("given a streamed answer with thinking, text and a tool call", () => {
    it("should stream them with the signature, then usage with cache reads counted as input", async () => {
      const server = await start({
        dialect: "anthropic",
        models: [{ id: "claude-haiku-4-5", window: 200_000 }],
        reply: {
          thinking: "Check the weather tool.",
          thinkingSignature: "sig-123",
          text: "Looking it up.",
          toolCalls: [{ id: "toolu_1", name: "weather", arguments: { city: "Oslo" } }],
          usage: { inputTokens: 5000, outputTokens: 40, cachedInputTokens: 4500 },
        },
      });
      const adapter = createAnthropic({ baseURL: server.baseURL });
      const parts = await collect(
        adapter.streamChat({ model: "claude-haiku-4-5", messages: [textMessage(0, "user", "Oslo?")], timeoutMs: 5000 }),
      );
      const thinking = parts.filter((part) => part.type === "thinking-delta");
      expect(thinking.map((part) => part.delta).join("")).toBe("Check the weather tool.");
      expect(thinking.at(-1)).toEqual({ type: "thinking-delta", delta: "", signature: "sig-123" });
      expect(parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("")).toBe("Looking it up.");
      expect(parts.filter((part) => part.type === "tool-call")).toEqual([
        { type: "tool-call", id: "toolu_1", name: "weather", arguments: '{"city":"Oslo"}' },
      ]);
      expect(parts.slice(-2)).toEqual([
        { type: "usage", usage: { inputTokens: 5000, outputTokens: 40, cachedInputTokens: 4500 } },
        { type: "finish", reason: "tool-calls" },
      ]);
      expect(server.chatRequests()[0]?.body).toMatchObject({ max_tokens: 4096, stream: true });
    });
  });

  describe("given a stable prefix that ends at cacheBreakpointIndex", () => {
    it("should mark the system prompt and the last block of that message with cache_control, nothing after", async () => {
      const server = await start({ dialect: "anthropic", models: [{ id: "m" }] });
      const adapter = createAnthropic({ baseURL: server.baseURL });
      const messages: ChatMessage[] = [
        {
          seq: 0,
          role: "user",
          parts: [
            { type: "text", text: "<earlier-in-this-chat>summary</earlier-in-this-chat>" },
            { type: "text", text: "First question" },
          ],
        },
        {
          seq: 1,
          role: "assistant",
          parts: [
            { type: "thinking", text: "hmm", signature: "sig-a" },
            { type: "thinking", text: "ENCRYPTED", redacted: true },
            { type: "text", text: "First answer" },
          ],
        },
        textMessage(2, "user", "Second question"),
      ];
      await collect(
        adapter.streamChat({ model: "m", system: "You are kind.", messages, cacheBreakpointIndex: 1, timeoutMs: 5000 }),
      );
      const body = server.chatRequests()[0]?.body as Record<string, unknown>;
      expect(body.system).toEqual([{ type: "text", text: "You are kind.", cache_control: { type: "ephemeral" } }]);
      expect(body.messages).toEqual([
        {
          role: "user",
          content: [
            { type: "text", text: "<earlier-in-this-chat>summary</earlier-in-this-chat>" },
            { type: "text", text: "First question" },
          ],
        },
        {
          role: "assistant",
          content: [
            // Thinking and its signature travel back byte for byte; redacted thinking as its data.
            { type: "thinking", thinking: "hmm", signature: "sig-a" },
            { type: "redacted_thinking", data: "ENCRYPTED" },
            { type: "text", text: "First answer", cache_control: { type: "ephemeral" } },
          ],
        },
        { role: "user", content: [{ type: "text", text: "Second question" }] },
      ]);
    });

    it("should put tool results in the user message after the tool call", async () => {
      const server = await start({ dialect: "anthropic", models: [{ id: "m" }] });
      const adapter = createAnthropic({ baseURL: server.baseURL });
      await collect(
        adapter.streamChat({
          model: "m",
          messages: [
            textMessage(0, "user", "Weather?"),
            {
              seq: 1,
              role: "assistant",
              parts: [{ type: "tool-call", id: "t1", name: "weather", arguments: '{"c":1}' }],
            },
            { seq: 2, role: "tool", parts: [{ type: "tool-result", callId: "t1", text: "Sunny", isError: false }] },
          ],
          tools: [{ name: "weather", parameters: { type: "object" } }],
          timeoutMs: 5000,
        }),
      );
      const body = server.chatRequests()[0]?.body as Record<string, unknown>;
      expect(body.messages).toEqual([
        { role: "user", content: [{ type: "text", text: "Weather?" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "weather", input: { c: 1 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "Sunny" }] },
      ]);
      expect(body.tools).toEqual([{ name: "weather", input_schema: { type: "object" } }]);
    });
  });
});
