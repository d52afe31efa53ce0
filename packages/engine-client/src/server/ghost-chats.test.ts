import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WireAbortResponse, WireCompactResponse } from "../protocol/wire.js";
import { createInProcessRunningTurns } from "./running-turns.js";
import { bearer, type EngineServer, startEngineServer } from "./testing/engine-server.js";

// Issue #28, fault 1: a person who names chat ids nobody wrote (a probe, a hostile client) makes the server keep
// nothing for them, in memory or on disk.
const runningTurns = createInProcessRunningTurns();
let server: EngineServer;

beforeAll(async () => {
  server = await startEngineServer({ handler: { runningTurns } });
});
afterAll(async () => {
  await server?.close();
});

const call = (path: string, init: RequestInit = {}) =>
  fetch(`${server.baseURL}${path}`, { ...init, headers: { ...bearer("alice"), ...init.headers } });

async function filesOf(folder: string): Promise<string[]> {
  try {
    return await readdir(folder, { recursive: true });
  } catch {
    return [];
  }
}

describe("given chat ids nobody ever wrote", () => {
  it("should keep nothing for an abort, a /compact, a branch switch, a usage or an events request, and answer DELETE with 404", async () => {
    for (let index = 0; index < 8; index++) {
      const chatId = `ghost-${index}`;
      const aborted = await call(`/chats/${chatId}/abort`, { method: "POST" });
      expect(((await aborted.json()) as WireAbortResponse).aborted).toBe(false);
      const compacted = await call(`/chats/${chatId}/compact`, { method: "POST" });
      expect(((await compacted.json()) as WireCompactResponse).result.status).toBe("nothing-to-fold");
      expect((await call(`/chats/${chatId}/usage`)).status).toBe(200);
      const switched = await call(`/chats/${chatId}/branch`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ seq: 0 }),
      });
      expect(switched.status).toBe(404);
      expect(((await switched.json()) as { type: string }).type).toBe("urn:conch:problem:not-found");
      const controller = new AbortController();
      const events = await call(`/chats/${chatId}/events`, { signal: controller.signal });
      expect(events.status).toBe(200);
      controller.abort();
      await events.body?.cancel().catch(() => undefined);
      expect((await call(`/chats/${chatId}`, { method: "DELETE" })).status).toBe(404);
      const stale = await call(`/chats/${chatId}/turns`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ seq: 3, text: "not the first" }),
      });
      expect(stale.status).toBe(409);
    }
    // The events streams' followers go once their connections are seen closed.
    await expect.poll(() => runningTurns.heldChats(), { timeout: 10_000 }).toBe(0);
    // The store's own lock file is the person's, not a chat's.
    expect((await filesOf(server.storeOf("alice").root)).filter((name) => name.includes("ghost"))).toEqual([]);
  });
});
