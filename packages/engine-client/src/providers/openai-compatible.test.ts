import {
  type FakeModel,
  type FakeOpenAIRow,
  type FakeProvider,
  type FakeProviderOptions,
  type FakeReply,
  startFakeProvider,
} from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../messages.js";
import { createOpenAICompatible } from "./openai-compatible.js";
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

function joined(parts: readonly ProviderStreamPart[], type: "text-delta" | "thinking-delta"): string {
  return parts.map((part) => (part.type === type ? part.delta : "")).join("");
}

interface ListCase {
  readonly row: FakeOpenAIRow;
  readonly models: readonly FakeModel[];
  readonly expected: readonly { id: string; context?: number; ready: boolean }[];
  readonly lmStudioRestVersion?: "v1" | "v0" | "none";
  readonly why: string;
}

const listCases: readonly ListCase[] = [
  {
    row: "openai",
    why: "OpenAI lists no window, and its list mixes in non-chat models",
    models: [{ id: "gpt-5-mini", window: 400_000 }, { id: "text-embedding-3-small" }, { id: "whisper-1" }],
    expected: [{ id: "gpt-5-mini", ready: true }],
  },
  {
    row: "deepseek",
    why: "DeepSeek lists ids only",
    models: [{ id: "deepseek-v4-flash", window: 131_072 }],
    expected: [{ id: "deepseek-v4-flash", ready: true }],
  },
  {
    row: "xai",
    why: "xAI lists no window",
    models: [{ id: "grok-4", window: 256_000 }],
    expected: [{ id: "grok-4", ready: true }],
  },
  {
    row: "zhipu",
    why: "Zhipu lists ids only",
    models: [{ id: "glm-4.5", window: 131_072 }],
    expected: [{ id: "glm-4.5", ready: true }],
  },
  {
    row: "groq",
    why: "Groq's context_window, speech models left out",
    models: [
      { id: "llama-3.1-8b-instant", window: 131_072 },
      { id: "whisper-large-v3", window: 448 },
    ],
    expected: [{ id: "llama-3.1-8b-instant", context: 131_072, ready: true }],
  },
  {
    row: "together",
    why: "Together's bare array with context_length",
    models: [{ id: "mistralai/Mistral-7B-Instruct-v0.3", window: 32_768, displayName: "Mistral (7B) Instruct v0.3" }],
    expected: [{ id: "mistralai/Mistral-7B-Instruct-v0.3", context: 32_768, ready: true }],
  },
  {
    row: "mistral",
    why: "Mistral's max_context_length",
    models: [{ id: "mistral-medium-2505", window: 131_072 }],
    expected: [{ id: "mistral-medium-2505", context: 131_072, ready: true }],
  },
  {
    row: "openrouter",
    why: "OpenRouter's top_provider.context_length before context_length",
    models: [{ id: "qwen/qwen3-coder:free", window: 262_000, advertisedWindow: 1_048_576 }],
    expected: [{ id: "qwen/qwen3-coder:free", context: 262_000, ready: true }],
  },
  {
    row: "vllm",
    why: "vLLM's max_model_len",
    models: [{ id: "swiss-ai/Apertus-8B-Instruct-2509", window: 65_536 }],
    expected: [{ id: "swiss-ai/Apertus-8B-Instruct-2509", context: 65_536, ready: true }],
  },
  {
    row: "llama.cpp",
    why: "llama.cpp's per-slot n_ctx from /props, not n_ctx_train",
    models: [{ id: "qwen3.8-27b", window: 32_768, advertisedWindow: 262_144 }],
    expected: [{ id: "qwen3.8-27b", context: 32_768, ready: true }],
  },
  {
    row: "llama.cpp",
    why: "llama.cpp in router mode: /props?model= per model (a bare /props says 0)",
    models: [
      { id: "small", window: 4096, advertisedWindow: 32_768 },
      { id: "large", window: 16_384, advertisedWindow: 131_072 },
    ],
    expected: [
      { id: "small", context: 4096, ready: true },
      { id: "large", context: 16_384, ready: true },
    ],
  },
  {
    row: "lmstudio",
    why: "LM Studio 0.4's loaded instance window, not max_context_length; a model not loaded has none",
    models: [
      { id: "gemma-3-4b-it", window: 4096, advertisedWindow: 131_072 },
      { id: "qwen3-8b", window: 8192, advertisedWindow: 40_960, loaded: false },
    ],
    expected: [
      { id: "gemma-3-4b-it", context: 4096, ready: true },
      { id: "qwen3-8b", ready: false },
    ],
  },
  {
    row: "lmstudio",
    lmStudioRestVersion: "v0",
    why: "LM Studio 0.3's loaded_context_length (the v1 list is missing)",
    models: [
      { id: "gemma-3-4b-it", window: 4096, advertisedWindow: 131_072 },
      { id: "qwen3-8b", window: 8192, advertisedWindow: 40_960, loaded: false },
    ],
    expected: [
      { id: "gemma-3-4b-it", context: 4096, ready: true },
      { id: "qwen3-8b", ready: false },
    ],
  },
  {
    row: "lmstudio",
    lmStudioRestVersion: "none",
    why: "LM Studio with only the OpenAI-compatible list: ids, no window",
    models: [{ id: "gemma-3-4b-it", window: 4096 }],
    expected: [{ id: "gemma-3-4b-it", ready: true }],
  },
];

describe("createOpenAICompatible listModels", () => {
  describe.each(listCases.map((item) => [`${item.row}: ${item.why}`, item] as const))("given %s", (_name, item) => {
    it("should read each model's window from the row's field", async () => {
      const server = await start({
        dialect: "openai",
        row: item.row,
        models: item.models,
        ...(item.lmStudioRestVersion && { lmStudioRestVersion: item.lmStudioRestVersion }),
      });
      const adapter = createOpenAICompatible({ row: item.row, baseURL: server.baseURL, apiKey: "key" });
      const models = await adapter.listModels({ timeoutMs: 5000 });
      expect(
        models.map(({ id, context, ready }) => ({ id, ...(context !== undefined && { context }), ready })),
      ).toEqual(item.expected);
      for (const model of models) expect(model).toMatchObject({ provider: item.row, local: true });
      expect(server.requests.every((request) => request.headers.authorization === "Bearer key")).toBe(true);
    });
  });

  describe.each(
    listCases
      .filter((item) => ["llama.cpp", "lmstudio", "vllm"].includes(item.row))
      .map((item) => [`${item.row}: ${item.why}`, item] as const),
  )("given %s at the server's bare address (no /v1)", (_name, item) => {
    it("should reach the same endpoints and read the same windows", async () => {
      const server = await start({
        dialect: "openai",
        row: item.row,
        models: item.models,
        ...(item.lmStudioRestVersion && { lmStudioRestVersion: item.lmStudioRestVersion }),
      });
      const bare = server.baseURL.replace(/\/v1$/, "");
      expect(bare).not.toBe(server.baseURL);
      const adapter = createOpenAICompatible({ row: item.row, baseURL: `${bare}/`, apiKey: "key" });
      const models = await adapter.listModels({ timeoutMs: 5000 });
      expect(
        models.map(({ id, context, ready }) => ({ id, ...(context !== undefined && { context }), ready })),
      ).toEqual(item.expected);
      const parts = await collect(
        adapter.streamChat({ model: item.expected[0]?.id ?? "", messages: [textMessage(0, "user", "hello")] }),
      );
      expect(parts.some((part) => part.type === "finish")).toBe(true);
      // The OpenAI-style API under /v1, the server's own endpoints at its root: never /models or /chat at the root.
      const paths = server.requests.map((request) => request.path);
      expect(paths.filter((path) => !/^\/(?:v1\/|props$|api\/)/.test(path))).toEqual([]);
      expect(paths).toContain("/v1/chat/completions");
    });
  });

  describe("given a remote base URL for a cloud row and a local one for a server row", () => {
    it("should say whether the adapter is local by kind or by host", () => {
      expect(createOpenAICompatible({ row: "openai" }).local).toBe(false);
      expect(createOpenAICompatible({ row: "openai", baseURL: "http://127.0.0.1:9/v1" }).local).toBe(true);
      expect(createOpenAICompatible({ row: "lmstudio", baseURL: "http://desk.lan:1234/v1" }).local).toBe(true);
      expect(createOpenAICompatible({ row: "vllm", baseURL: "http://gpu-box.lan:8000/v1" }).local).toBe(false);
      expect(createOpenAICompatible({ row: "vllm" }).local).toBe(true);
      expect(createOpenAICompatible({ row: "openai", baseURL: "http://127.0.0.1:9/v1", local: false }).local).toBe(
        false,
      );
    });
  });
});

const streamRows: readonly FakeOpenAIRow[] = [
  "openai",
  "deepseek",
  "xai",
  "groq",
  "together",
  "mistral",
  "openrouter",
  "zhipu",
  "vllm",
  "llama.cpp",
  "lmstudio",
];

const scripted: FakeReply = {
  thinking: "The person wants the weather; call the tool.",
  text: "Let me look that up for you.",
  toolCalls: [{ id: "call_weather", name: "weather", arguments: { city: "Lisbon", unit: "C" } }],
  usage: { inputTokens: 1234, outputTokens: 56, cachedInputTokens: 1000 },
};

describe("createOpenAICompatible streamChat", () => {
  describe.each(streamRows.map((row) => [row] as const))(
    "given the %s row streaming text, thinking and a tool call",
    (row) => {
      it("should stream the deltas, then the complete tool call, the usage and the finish", async () => {
        const server = await start({ dialect: "openai", row, models: [{ id: "m", window: 100_000 }], reply: scripted });
        const adapter = createOpenAICompatible({ row, baseURL: server.baseURL });
        const parts = await collect(
          adapter.streamChat({
            model: "m",
            system: "Be brief.",
            messages: [textMessage(0, "user", "Weather in Lisbon?")],
            tools: [{ name: "weather", description: "Weather now", parameters: { type: "object" } }],
            maxOutputTokens: 500,
            timeoutMs: 5000,
          }),
        );
        expect(joined(parts, "thinking-delta")).toBe(scripted.thinking);
        expect(joined(parts, "text-delta")).toBe(scripted.text);
        expect(parts.filter((part) => part.type === "tool-call")).toEqual([
          { type: "tool-call", id: "call_weather", name: "weather", arguments: '{"city":"Lisbon","unit":"C"}' },
        ]);
        expect(parts.at(-2)).toEqual({
          type: "usage",
          usage: { inputTokens: 1234, outputTokens: 56, cachedInputTokens: 1000 },
        });
        expect(parts.at(-1)).toEqual({ type: "finish", reason: "tool-calls" });

        const [request] = server.chatRequests();
        const body = request?.body as Record<string, unknown>;
        expect(body).toMatchObject({
          model: "m",
          stream: true,
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Weather in Lisbon?" },
          ],
          tools: [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }],
        });
        expect(body[row === "openai" ? "max_completion_tokens" : "max_tokens"]).toBe(500);
      });
    },
  );

  describe("given the rows' own request fields", () => {
    it("should ask OpenRouter for an error instead of a silent middle-out cut", async () => {
      const server = await start({ dialect: "openai", row: "openrouter", models: [{ id: "m" }] });
      const adapter = createOpenAICompatible({ row: "openrouter", baseURL: server.baseURL });
      await collect(adapter.streamChat({ model: "m", messages: [textMessage(0, "user", "hi")], timeoutMs: 5000 }));
      expect(server.chatRequests()[0]?.body).toMatchObject({ transforms: [], stream_options: { include_usage: true } });
    });

    it("should not send stream_options to Mistral, which refuses unknown fields", async () => {
      const server = await start({ dialect: "openai", row: "mistral", models: [{ id: "m" }] });
      const adapter = createOpenAICompatible({ row: "mistral", baseURL: server.baseURL });
      const parts = await collect(
        adapter.streamChat({ model: "m", messages: [textMessage(0, "user", "hi")], timeoutMs: 5000 }),
      );
      expect(server.chatRequests()[0]?.body).not.toHaveProperty("stream_options");
      expect(parts.some((part) => part.type === "usage")).toBe(true);
    });

    it("should send DeepSeek's reasoning back on assistant messages that called tools, and nowhere else", async () => {
      const server = await start({ dialect: "openai", row: "deepseek", models: [{ id: "m" }] });
      const adapter = createOpenAICompatible({ row: "deepseek", baseURL: server.baseURL });
      await collect(
        adapter.streamChat({
          model: "m",
          messages: [
            textMessage(0, "user", "Weather?"),
            {
              seq: 1,
              role: "assistant",
              parts: [
                { type: "thinking", text: "Use the tool." },
                { type: "tool-call", id: "c1", name: "weather", arguments: "{}" },
              ],
            },
            { seq: 2, role: "tool", parts: [{ type: "tool-result", callId: "c1", text: "Sunny" }] },
            {
              seq: 3,
              role: "assistant",
              parts: [
                { type: "thinking", text: "Answer." },
                { type: "text", text: "Sunny." },
              ],
            },
            textMessage(4, "user", "Thanks"),
          ],
          timeoutMs: 5000,
        }),
      );
      const messages = (server.chatRequests()[0]?.body as { messages?: unknown[] } | undefined)?.messages ?? [];
      expect(messages[1]).toEqual({
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: "{}" } }],
        reasoning_content: "Use the tool.",
      });
      expect(messages[2]).toEqual({ role: "tool", tool_call_id: "c1", content: "Sunny" });
      expect(messages[3]).toEqual({ role: "assistant", content: "Sunny." });
    });

    it("should send a picture's bytes as a data URL", async () => {
      const server = await start({ dialect: "openai", row: "openai", models: [{ id: "m" }] });
      const adapter = createOpenAICompatible({ row: "openai", baseURL: server.baseURL });
      await collect(
        adapter.streamChat({
          model: "m",
          messages: [
            {
              seq: 0,
              role: "user",
              parts: [
                { type: "text", text: "What is this?" },
                { type: "picture", name: "cat.png", mediaType: "image/png", data: "iVBORw0KGgo=" },
              ],
            },
          ],
          timeoutMs: 5000,
        }),
      );
      expect(server.chatRequests()[0]?.body).toHaveProperty("messages.0", {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        ],
      });
    });
  });

  describe("given a plain answer with no tool call", () => {
    it("should finish with `stop`", async () => {
      const server = await start({ dialect: "openai", row: "vllm", models: [{ id: "m" }], reply: { text: "Hi." } });
      const adapter = createOpenAICompatible({ row: "vllm", baseURL: server.baseURL });
      const parts = await collect(
        adapter.streamChat({ model: "m", messages: [textMessage(0, "user", "hi")], timeoutMs: 5000 }),
      );
      expect(joined(parts, "text-delta")).toBe("Hi.");
      expect(parts.at(-1)).toEqual({ type: "finish", reason: "stop" });
    });
  });

  describe("given a stream the consumer stops reading", () => {
    it("should release the connection so the server can close", async () => {
      const server = await start({
        dialect: "openai",
        row: "openai",
        models: [{ id: "m" }],
        reply: { text: "x".repeat(2000) },
        chunkSize: 10,
        chunkDelayMs: 5,
      });
      const adapter = createOpenAICompatible({ row: "openai", baseURL: server.baseURL });
      for await (const part of adapter.streamChat({
        model: "m",
        messages: [textMessage(0, "user", "hi")],
        timeoutMs: 5000,
      })) {
        if (part.type === "text-delta") break;
      }
      await server.close();
    });
  });
});
