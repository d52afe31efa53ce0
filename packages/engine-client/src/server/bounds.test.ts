import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WireProblem } from "../protocol/wire.js";
import { bearer, type EngineServer, startEngineServer } from "./testing/engine-server.js";

// Issue #28, fault 5: per-person bounds with defaults ordinary use never meets (8 turns at once, 32 open event
// streams, 120 turns a minute), each a 429 with Retry-After past it, and model ids limited to GET /models.
const longReply = Array.from({ length: 400 }, (_, index) => `Sentence ${index + 1} of a long answer.`).join(" ");
let server: EngineServer;
const open: AbortController[] = [];

beforeAll(async () => {
  server = await startEngineServer({ chunkDelayMs: 40 });
});
afterAll(async () => {
  for (const controller of open) controller.abort();
  await server?.close();
});

function postTurn(chatId: string, body: Record<string, unknown>, user: "alice" | "bob" = "alice") {
  const controller = new AbortController();
  open.push(controller);
  return fetch(`${server.baseURL}/chats/${chatId}/turns`, {
    method: "POST",
    headers: { ...bearer(user), "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
}

async function problemOf(response: Response): Promise<WireProblem> {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as WireProblem;
}

describe("given one person", () => {
  it("should refuse open event streams past the bound with 429 and Retry-After, and take one again once one closes", async () => {
    const streams: AbortController[] = [];
    for (let index = 0; index < 32; index++) {
      const controller = new AbortController();
      open.push(controller);
      streams.push(controller);
      const response = await fetch(`${server.baseURL}/chats/streams-${index}/events`, {
        headers: bearer("bob"),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
    }
    const refused = await fetch(`${server.baseURL}/chats/streams-x/events`, { headers: bearer("bob") });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await problemOf(refused)).type).toBe("urn:conch:problem:rate-limited");
    // Another person is not held back by bob's streams.
    const alices = new AbortController();
    open.push(alices);
    expect(
      (await fetch(`${server.baseURL}/chats/a/events`, { headers: bearer("alice"), signal: alices.signal })).status,
    ).toBe(200);
    alices.abort();
    streams[0]?.abort();
    await expect
      .poll(async () => {
        const controller = new AbortController();
        open.push(controller);
        const again = await fetch(`${server.baseURL}/chats/streams-y/events`, {
          headers: bearer("bob"),
          signal: controller.signal,
        });
        if (again.status !== 200) await again.body?.cancel();
        return again.status;
      })
      .toBe(200);
    for (const controller of streams) controller.abort();
  });

  it("should refuse a turn past the concurrent turns bound with 429 and Retry-After, nothing sent to the provider", async () => {
    for (let index = 0; index < 8; index++) server.script.queue.push({ text: longReply });
    const running = await Promise.all(
      Array.from({ length: 8 }, (_, index) => postTurn(`busy-${index}`, { seq: 0, text: "Go" })),
    );
    for (const response of running) expect(response.status).toBe(200);
    try {
      const refused = await postTurn("busy-8", { seq: 0, text: "The refused turn" });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await problemOf(refused)).retryAfter).toBeGreaterThan(0);
      const sent = (text: string) =>
        server.fake.chatRequests().filter((request) => JSON.stringify(request.body).includes(text)).length;
      await expect.poll(() => sent('"Go"')).toBeGreaterThan(0);
      expect(sent("The refused turn")).toBe(0);
      // Stopping one frees its place.
      await fetch(`${server.baseURL}/chats/busy-0/abort`, { method: "POST", headers: bearer("alice") });
      server.script.queue.push({ text: "Short." });
      await expect
        .poll(async () => {
          const again = await postTurn("busy-9", { seq: 0, text: "Go" });
          await again.body?.cancel();
          return again.status;
        })
        .toBe(200);
    } finally {
      for (let index = 0; index < 10; index++) {
        await fetch(`${server.baseURL}/chats/busy-${index}/abort`, { method: "POST", headers: bearer("alice") });
      }
    }
  });

  it("should refuse a model GET /models does not list, and take one it lists", async () => {
    const unknown = await postTurn("models", { seq: 0, text: "Hi", model: "gpt-expensive-9" });
    expect(unknown.status).toBe(400);
    expect((await problemOf(unknown)).type).toBe("urn:conch:problem:unknown-model");
    const usage = await fetch(`${server.baseURL}/chats/models/usage?model=gpt-expensive-9`, {
      headers: bearer("alice"),
    });
    expect(usage.status).toBe(400);
    server.script.queue.push({ text: "Cheap answer." });
    const listed = await postTurn("models", { seq: 0, text: "Hi", model: "cheap" });
    expect(listed.status).toBe(200);
    await listed.text();
  });
});
