import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { readEventStream } from "../protocol/event-stream.js";
import { bearer, type EngineServer, startEngineServer, testApiKey } from "./testing/engine-server.js";

// Issue #28, fault 3: the provider's key in the model's text arrives in several text events (the fake sends
// 16 characters a chunk); none of them may carry a piece of it.
let server: EngineServer;
beforeAll(async () => {
  server = await startEngineServer();
});
afterAll(async () => {
  await server?.close();
});

const keyPieces = Array.from({ length: testApiKey.length - 7 }, (_, index) => testApiKey.slice(index, index + 8));

async function turnEvents(chatId: string, seq: number): Promise<{ raw: string; events: EngineEvent[] }> {
  const response = await fetch(`${server.baseURL}/chats/${chatId}/turns`, {
    method: "POST",
    headers: { ...bearer("alice"), "content-type": "application/json" },
    body: JSON.stringify({ seq, text: "What is the key?" }),
  });
  expect(response.status).toBe(200);
  const events: EngineEvent[] = [];
  let raw = "";
  for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
    raw += `${message.data}\n`;
    const event = JSON.parse(message.data) as EngineEvent;
    events.push(event);
    if (event.type === "turn-end") break;
  }
  return { raw, events };
}

describe("given an answer that spells the provider's key across several text events", () => {
  it("should stream it redacted: no event carries a piece of the key, and the words around it all arrive", async () => {
    server.script.queue.push({
      text: `Sure, the key is ${testApiKey} and that is all. Starts with ${testApiKey.slice(0, 4)}`,
    });
    const { raw, events } = await turnEvents("key-in-text", 0);
    const deltas = events.flatMap((event) => (event.type === "text-delta" ? [event.delta] : []));
    expect(deltas.length).toBeGreaterThan(3);
    for (const piece of keyPieces) expect(raw).not.toContain(piece);
    expect(deltas.join("")).toBe(`Sure, the key is [redacted] and that is all. Starts with ${testApiKey.slice(0, 4)}`);

    // A reconnect replays the same redacted events; the key's first characters at the very end came at the end.
    const replay = await fetch(`${server.baseURL}/chats/key-in-text/events`, { headers: bearer("alice") });
    let replayed = "";
    for await (const message of readEventStream(replay.body as ReadableStream<Uint8Array>)) {
      replayed += message.data;
      if ((JSON.parse(message.data) as EngineEvent).type === "turn-end") break;
    }
    for (const piece of keyPieces) expect(replayed).not.toContain(piece);
  });
});
