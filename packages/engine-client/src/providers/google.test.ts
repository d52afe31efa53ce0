import { type FakeProvider, type FakeProviderOptions, startFakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../messages.js";
import { createGoogle } from "./google.js";
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

describe("createGoogle", () => {
  describe("given a model list with inputTokenLimit", () => {
    it("should read the window from inputTokenLimit and drop the models/ prefix", async () => {
      const server = await start({
        dialect: "google",
        models: [{ id: "gemini-2.5-flash-lite", window: 1_048_576, displayName: "Gemini 2.5 Flash-Lite" }],
      });
      const adapter = createGoogle({ baseURL: server.baseURL, apiKey: "g-key" });
      expect(await adapter.listModels({ timeoutMs: 5000 })).toEqual([
        {
          id: "gemini-2.5-flash-lite",
          displayName: "Gemini 2.5 Flash-Lite",
          context: 1_048_576,
          ready: true,
          local: true,
          provider: "google",
        },
      ]);
      expect(server.requests[0]?.headers["x-goog-api-key"]).toBe("g-key");
    });
  });

  describe("given a streamed answer with thought summaries, text and a function call", () => {
    it("should stream them, carry the thought signature, and report usage with cached tokens", async () => {
      const server = await start({
        dialect: "google",
        models: [{ id: "gemini-2.5-pro", window: 1_048_576 }],
        reply: {
          thinking: "The person asks about weather.",
          thinkingSignature: "c2lnbmF0dXJl",
          text: "Checking.",
          toolCalls: [{ name: "weather", arguments: { city: "Rome" } }],
          usage: { inputTokens: 900, outputTokens: 20, cachedInputTokens: 512 },
        },
      });
      const adapter = createGoogle({ baseURL: server.baseURL });
      const parts = await collect(
        adapter.streamChat({
          model: "gemini-2.5-pro",
          system: "Be brief.",
          messages: [textMessage(0, "user", "Rome?")],
          tools: [{ name: "weather", parameters: { type: "object" } }],
          maxOutputTokens: 256,
          timeoutMs: 5000,
        }),
      );
      expect(parts.map((part) => (part.type === "thinking-delta" ? part.delta : "")).join("")).toBe(
        "The person asks about weather.",
      );
      expect(parts).toContainEqual({ type: "thinking-delta", delta: "", signature: "c2lnbmF0dXJl" });
      expect(parts.map((part) => (part.type === "text-delta" ? part.delta : "")).join("")).toBe("Checking.");
      const call = parts.find((part) => part.type === "tool-call");
      expect(call).toMatchObject({ type: "tool-call", name: "weather", arguments: '{"city":"Rome"}' });
      expect(parts.slice(-2)).toEqual([
        { type: "usage", usage: { inputTokens: 900, outputTokens: 20, cachedInputTokens: 512 } },
        { type: "finish", reason: "tool-calls" },
      ]);
      const request = server.chatRequests()[0];
      expect(request?.path).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent");
      expect(request?.query).toEqual({ alt: "sse" });
      expect(request?.body).toMatchObject({
        systemInstruction: { parts: [{ text: "Be brief." }] },
        contents: [{ role: "user", parts: [{ text: "Rome?" }] }],
        tools: [{ functionDeclarations: [{ name: "weather", parameters: { type: "object" } }] }],
        generationConfig: { maxOutputTokens: 256 },
      });
    });
  });

  describe("given a tool round with a thought signature in the history", () => {
    it("should put the signature back on the function call and name the function response", async () => {
      const server = await start({ dialect: "google", models: [{ id: "m" }] });
      const adapter = createGoogle({ baseURL: server.baseURL });
      await collect(
        adapter.streamChat({
          model: "m",
          messages: [
            textMessage(0, "user", "Rome?"),
            {
              seq: 1,
              role: "assistant",
              parts: [
                { type: "thinking", text: "", signature: "sig-g" },
                { type: "tool-call", id: "gemini_call_abc", name: "weather", arguments: '{"city":"Rome"}' },
              ],
            },
            { seq: 2, role: "tool", parts: [{ type: "tool-result", callId: "gemini_call_abc", text: "Sunny" }] },
          ],
          timeoutMs: 5000,
        }),
      );
      expect(server.chatRequests()[0]?.body).toHaveProperty("contents", [
        { role: "user", parts: [{ text: "Rome?" }] },
        // The made-up call id is not sent back; Gemini gave none.
        {
          role: "model",
          parts: [{ functionCall: { name: "weather", args: { city: "Rome" } }, thoughtSignature: "sig-g" }],
        },
        { role: "user", parts: [{ functionResponse: { name: "weather", response: { output: "Sunny" } } }] },
      ]);
    });
  });
});
