import { afterEach, describe, expect, it } from "vitest";
import { startFakeProvider } from "./fake-provider-server.js";
import type { FakeProvider, FakeProviderOptions } from "./fake-provider-types.js";
import { loadProviderErrorBodies, providerErrorBodiesURL } from "./provider-error-bodies.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: FakeProviderOptions): Promise<FakeProvider> {
  const server = await startFakeProvider(options);
  servers.push(server);
  return server;
}

function chat(server: FakeProvider, content: string, extra: Record<string, unknown> = {}) {
  return fetch(`${server.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake-model", stream: true, messages: [{ role: "user", content }], ...extra }),
  });
}

describe("loadProviderErrorBodies", () => {
  it("should read the project's own refusal bodies (test-fixtures/refusals/bodies.json) and index every entry", () => {
    const entries = loadProviderErrorBodies();
    expect(providerErrorBodiesURL.pathname.endsWith("/test-fixtures/refusals/bodies.json")).toBe(true);
    expect(entries.length).toBeGreaterThan(50);
    expect(entries.every((entry, index) => entry.index === index)).toBe(true);
  });
});

describe("startFakeProvider", () => {
  describe("given a browser page on another origin", () => {
    it("should answer the preflight and put CORS headers on answers", async () => {
      const server = await start({ dialect: "openai" });
      const preflight = await fetch(`${server.baseURL}/chat/completions`, {
        method: "OPTIONS",
        headers: {
          origin: "http://127.0.0.1:5173",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type",
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
      expect(preflight.headers.get("access-control-allow-headers")).toBe("authorization, content-type");
      const models = await fetch(`${server.baseURL}/models`);
      expect(models.headers.get("access-control-allow-origin")).toBe("*");
      await models.text();
    });
  });

  describe("given refuseNext with a count", () => {
    it("should refuse that many chat requests with the provider's first real too-long body, then answer", async () => {
      const server = await start({ dialect: "openai", row: "deepseek" });
      server.refuseNext(2);
      const first = await chat(server, "a");
      const second = await chat(server, "b");
      const third = await chat(server, "c");
      expect([first.status, second.status, third.status]).toEqual([400, 400, 200]);
      expect(await first.text()).toBe(loadProviderErrorBodies().find((entry) => entry.provider === "deepseek")?.body);
      await second.text();
      expect(await third.text()).toContain("data: [DONE]");
      expect(server.chatRequests()).toHaveLength(3);
    });
  });

  describe("given a reply function and a token counter", () => {
    it("should call it with the understood request and refuse over the window with the counted numbers", async () => {
      const seen: string[] = [];
      const server = await start({
        dialect: "openai",
        models: [{ id: "fake-model", window: 100 }],
        countTokens: (text) => text.split(/\s+/).filter(Boolean).length,
        reply: (request) => {
          seen.push(`${request.lastUserText}:${request.inputTokens}:${request.maxOutputTokens}`);
          return { text: "ok" };
        },
      });
      const fits = await chat(server, "one two three", { max_tokens: 10 });
      expect(await fits.text()).toContain('"content":"ok"');
      expect(seen).toEqual(["one two three:3:10"]);
      const over = await chat(server, "word ".repeat(150));
      expect(over.status).toBe(400);
      expect(await over.text()).toContain(
        "maximum context length is 100 tokens. However, your messages resulted in 150 tokens",
      );
    });
  });

  describe("given failNext on any request", () => {
    it("should play the failure once, on whatever comes next", async () => {
      const server = await start({ dialect: "openai" });
      server.failNext(1, "http-500", { on: "any" });
      const failed = await fetch(`${server.baseURL}/models`);
      expect(failed.status).toBe(500);
      await failed.text();
      const ok = await fetch(`${server.baseURL}/models`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ data: [{ id: "fake-model" }] });
    });
  });

  describe("given close while a slow answer is pending", () => {
    it("should end at once and free the port", async () => {
      const server = await startFakeProvider({ dialect: "ollama" });
      server.failNext(1, { type: "slow", delayMs: 60_000 });
      const pending = fetch(`${server.origin}/api/chat`, {
        method: "POST",
        body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }),
      }).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await server.close();
      expect(await pending).toBeInstanceOf(Error);
      const port = Number(new URL(server.origin).port);
      const again = await startFakeProvider({ dialect: "ollama", port });
      servers.push(again);
      expect(again.origin).toBe(server.origin);
    });
  });
});
