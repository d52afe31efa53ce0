import {
  type FakeChatRequest,
  type FakeProvider,
  type FakeReply,
  loadConversationFile,
  secretCorpus,
  startFakeProvider,
} from "@conch/fake-provider";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { chatLogFrom } from "../mock/long-chat.js";
import { createProvider } from "../providers/create-provider.js";
import { summariseFolded, summariserModels, summaryLimitTokens } from "./summariser.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A scripted summariser shaped like a real one: it reads the lines and the summary so far, and writes a summary of both. */
function scriptedSummary(request: FakeChatRequest): FakeReply {
  const prompt = request.lastUserText;
  const before = /<summary-so-far>\n([\s\S]*?)\n<\/summary-so-far>/.exec(prompt)?.[1] ?? "";
  const lines = /<chat-lines>\n([\s\S]*?)\n<\/chat-lines>/.exec(prompt)?.[1] ?? "";
  const requests = lines
    .split("\n")
    .filter((line) => line.startsWith("Person: "))
    .map((line) => `- ${line.slice("Person: ".length, 80)}`);
  const pieces = Number(/pieces read: (\d+)/.exec(before)?.[1] ?? "0") + 1;
  const kept = before
    .split("\n")
    .filter((line) => line.startsWith("- "))
    .slice(-20);
  return { text: [`What the person wants (pieces read: ${pieces}):`, ...kept, ...requests].join("\n") };
}

async function openAIServer(
  options: { reply?: (request: FakeChatRequest) => FakeReply; window?: number; chunkDelayMs?: number } = {},
) {
  const server = await startFakeProvider({
    dialect: "openai",
    models: [
      { id: "big", window: 200_000 },
      { id: "cheap", window: options.window ?? 128_000 },
      { id: "small", window: 128_000 },
    ],
    countTokens: (text) => countTokens(text),
    reply: options.reply ?? scriptedSummary,
    ...(options.chunkDelayMs ? { chunkDelayMs: options.chunkDelayMs } : {}),
  });
  servers.push(server);
  const provider = createProvider("openai", {
    baseURL: server.baseURL,
    local: false,
    cheapestModel: "cheap",
    smallModel: "small",
  });
  return { server, provider, models: await provider.listModels() };
}

const folded: ChatMessage[] = chatLogFrom([
  ["Please call me Ada and keep answers short.", "Sure, Ada."],
  ["The release is on 2026-12-04; the file is src/release.ts.", "Noted the date and the file."],
]);

function chatBodies(server: FakeProvider): string[] {
  return server.chatRequests().map((request) => JSON.stringify(request.body));
}

describe("summariserModels", () => {
  it.each([
    [{ local: false, cheapestModel: "c", smallModel: "s" }, "chat", ["c", "s", "chat"]],
    [{ local: false, cheapestModel: "chat", smallModel: undefined }, "chat", ["chat"]],
    [{ local: false }, "chat", ["chat"]],
    [{ local: true, cheapestModel: "c", smallModel: "s" }, "chat", ["chat"]],
  ])("given %j and the chat's model, should try %j", (provider, chat, expected) => {
    expect(summariserModels(provider, chat)).toEqual(expected);
  });
});

describe("summaryLimitTokens", () => {
  it.each([
    [100_000, 4_000],
    [16_000, 2_000],
    [800, 200],
  ])("given a budget of %i, should allow %i tokens", (budget, limit) => {
    expect(summaryLimitTokens(budget)).toBe(limit);
  });
});

describe("summariseFolded over loopback HTTP", () => {
  it("given a working cheapest model, should use only it and state the limit and headings", async () => {
    const { server, provider, models } = await openAIServer();
    const result = await summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded,
      previousSummary: null,
      budget: 16_000,
    });
    expect(result.status).toBe("summarised");
    expect(result.status === "summarised" && result.model).toBe("cheap");
    expect(result.status === "summarised" && result.text).toContain("Please call me Ada");
    expect(server.chatRequests().map((request) => request.model)).toEqual(["cheap"]);
    const prompt = chatBodies(server)[0] as string;
    expect(prompt).toContain("under 2000 tokens");
    expect(prompt).toContain("Facts to keep");
    expect(prompt).toContain("Still open");
    expect(prompt).toContain("finished tasks as finished");
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
  });

  it("given a focus, should state it first", async () => {
    const { server, provider, models } = await openAIServer();
    await summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded,
      previousSummary: null,
      budget: 16_000,
      keep: "the release date",
    });
    const body = server.chatRequests()[0]?.body as { messages: Array<{ role: string; content: string }> };
    const user = body.messages.find((message) => message.role === "user")?.content ?? "";
    expect(user.startsWith("Above all, keep this, as the person asked: the release date")).toBe(true);
  });

  it("given the cheapest model fails and the small one refuses, should fall back to the chat's model", async () => {
    const { server, provider, models } = await openAIServer({
      reply: (request) =>
        request.model === "small" ? { text: "I'm sorry, but I can't help with that." } : scriptedSummary(request),
    });
    server.failNext(1, "http-500");
    const result = await summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded,
      previousSummary: null,
      budget: 16_000,
    });
    expect(server.chatRequests().map((request) => request.model)).toEqual(["cheap", "small", "big"]);
    expect(result.status === "summarised" && result.model).toBe("big");
    expect(
      result.status === "summarised" && result.attempts.map((attempt) => [attempt.model, attempt.rejection]),
    ).toEqual([
      ["cheap", "error"],
      ["small", "refusal"],
    ]);
  });

  it.each([
    ["a refusal", { text: "I cannot summarise this conversation." }, "refusal"],
    ["a tool call", { toolCalls: [{ name: "search", arguments: "{}" }] }, "tool-call"],
    ["an empty reply", { text: "" }, "empty"],
    ["a whitespace reply", { text: "   \n\t " }, "empty"],
    [
      "a reply cut off by the length limit",
      { text: "What the person wants: a long", finishReason: "length" },
      "cut-off",
    ],
    [
      "a reply that repeats the prompt",
      {
        text: "- What the person wants: their requests, kept close to their own words.\n- Decided or done: what was agreed and what is finished. Write finished tasks as finished, so that nobody takes them up again.",
      },
      "echo",
    ],
  ] as const)("given %s from every model, should keep nothing and say why", async (_name, reply, rejection) => {
    const { provider, models } = await openAIServer({ reply: () => reply });
    const result = await summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded,
      previousSummary: "Old summary.",
      budget: 16_000,
    });
    expect(result.status).toBe("failed");
    expect(result.attempts.map((attempt) => attempt.rejection)).toEqual([rejection, rejection, rejection]);
  });

  it("given a server on this computer, should only ever ask the chat's own model", async () => {
    const server = await startFakeProvider({
      dialect: "ollama",
      models: [{ id: "qwen3:8b", window: 16_384 }],
      reply: scriptedSummary,
    });
    servers.push(server);
    const provider = createProvider("ollama", {
      baseURL: server.baseURL,
      cheapestModel: "tiny:1b",
      smallModel: "small:3b",
    });
    expect(provider.local).toBe(true);
    server.failNext(1, "http-500");
    const result = await summariseFolded({
      provider,
      chatModel: "qwen3:8b",
      folded,
      previousSummary: null,
      budget: 8_000,
    });
    expect(result.status).toBe("failed");
    expect(server.chatRequests().map((request) => request.model)).toEqual(["qwen3:8b"]);
  });

  it("should never send a secret from the corpus", async () => {
    const { server, provider, models } = await openAIServer();
    const secretLog = chatLogFrom(secretCorpus.map(({ text }) => [text, `I used ${text}`] as const));
    const result = await summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded: secretLog,
      previousSummary: `Earlier: ${secretCorpus[0]?.text}`,
      keep: `keep ${secretCorpus[1]?.text}`,
      budget: 16_000,
    });
    expect(result.status).toBe("summarised");
    const sent = chatBodies(server).join("\n");
    for (const { kind, secret } of secretCorpus) expect(sent, kind).not.toContain(secret);
    for (const { secret } of secretCorpus) expect(result.status === "summarised" && result.text).not.toContain(secret);
  });

  it("given an abort while the summary streams, should reject with the AbortError", async () => {
    const { provider, models } = await openAIServer({ chunkDelayMs: 20, reply: () => ({ text: "x ".repeat(400) }) });
    const controller = new AbortController();
    const promise = summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded,
      previousSummary: null,
      budget: 16_000,
      abortSignal: controller.signal,
    });
    setTimeout(() => controller.abort(), 30);
    await expect(promise).rejects.toMatchObject({ name: "AbortError" });
  });

  it("given a long real transcript, should fold 24,000-character pieces one by one into the running summary", async () => {
    // 158 messages, 149,058 characters of a real agent session (test-fixtures/chats).
    const conversation = loadConversationFile("minsky-specstory.jsonl").find(
      (candidate) => candidate.id === "minsky/2025-04-26_20-30-setting-up-minsky-cli-with-bun",
    );
    expect(conversation).toBeDefined();
    const { server, provider, models } = await openAIServer();
    const result = await summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded: conversation?.messages ?? [],
      previousSummary: "The person started a CLI called minsky.",
      budget: 100_000,
    });
    expect(result.status).toBe("summarised");
    const requests = server.chatRequests();
    expect(requests.length).toBeGreaterThan(5);
    expect(result.requests).toBe(requests.length);
    for (const [index, request] of requests.entries()) {
      const user =
        (request.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === "user")
          ?.content ?? "";
      const lines = /<chat-lines>\n([\s\S]*?)\n<\/chat-lines>/.exec(user)?.[1] ?? "";
      expect(lines.length).toBeLessThanOrEqual(24_000);
      // Each request carries the summary so far first: the previous one's reply.
      const summarySoFar = /<summary-so-far>\n([\s\S]*?)\n<\/summary-so-far>/.exec(user)?.[1] ?? "";
      if (index === 0) expect(summarySoFar).toBe("The person started a CLI called minsky.");
      else expect(summarySoFar).toContain(`(pieces read: ${index})`);
    }
    expect(result.status === "summarised" && result.text).toContain(`(pieces read: ${requests.length})`);
  });

  it("given a summariser whose small window is listed, should cut smaller pieces so that every request fits it (real token counts)", async () => {
    const conversation = loadConversationFile("aider-ru.jsonl")[0];
    const server = await startFakeProvider({
      dialect: "openai",
      row: "openrouter",
      models: [
        { id: "big", window: 200_000 },
        { id: "cheap", window: 6_000 },
      ],
      countTokens: (text) => countTokens(text),
      reply: scriptedSummary,
    });
    servers.push(server);
    const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
    const models = await provider.listModels();
    expect(models.find((model) => model.id === "cheap")?.context).toBe(6_000);
    const result = await summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded: conversation?.messages ?? [],
      previousSummary: null,
      budget: 8_000,
    });
    expect(result.status === "summarised" && result.model).toBe("cheap");
    expect(result.attempts).toEqual([]);
    // The server refuses anything over the window with OpenRouter's real body: nothing was refused.
    const requests = server.chatRequests();
    expect(requests.length).toBeGreaterThan(5);
    expect(requests.every((request) => request.model === "cheap")).toBe(true);
  });

  it("given a summariser whose window only its refusal names, should learn it and cut smaller pieces", async () => {
    const conversation = loadConversationFile("aider-ru.jsonl")[0];
    const { server, provider, models } = await openAIServer({ window: 6_000 });
    const result = await summariseFolded({
      provider,
      models,
      chatModel: "big",
      folded: conversation?.messages ?? [],
      previousSummary: null,
      budget: 8_000,
    });
    expect(result.status === "summarised" && result.model).toBe("cheap");
    expect(result.attempts.map((attempt) => attempt.rejection)).toEqual(["error"]);
    expect(provider.windows.get("openai", "cheap")).toBe(6_000);
    expect(server.chatRequests().every((request) => request.model === "cheap")).toBe(true);
  });
});
