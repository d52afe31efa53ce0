import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderCallError } from "../errors.js";
import { textMessage } from "../messages.js";
import { createProvider } from "./create-provider.js";
import { maximumEventChars } from "./http.js";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A broken provider on loopback: 200, then a `data:` line (or an NDJSON line) that never ends. */
async function endlessLine(contentType: string, start: string): Promise<{ url: string; sent: () => number }> {
  let sent = 0;
  const server = createServer((req, res) => {
    if (req.url?.includes("models") || req.url?.includes("tags")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ data: [], models: [] }));
      return;
    }
    res.writeHead(200, { "content-type": contentType });
    res.write(start);
    const chunk = "x".repeat(64 * 1024);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) sent += chunk.length;
      if (!res.destroyed) res.once("drain", pump);
    };
    res.on("close", () => res.removeAllListeners("drain"));
    pump();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent: () => sent };
}

async function failureOf(stream: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _part of stream) {
      // drain
    }
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("a stream event that never ends (fault 5)", () => {
  it("should fail with a typed error once one SSE event passes the cap, instead of growing the heap", async () => {
    const server = await endlessLine("text/event-stream", 'data: {"choices":[{"delta":{"content":"');
    const adapter = createProvider("openai", { baseURL: `${server.url}/v1`, local: false });
    const error = await failureOf(
      adapter.streamChat({ model: "m", messages: [textMessage(0, "user", "hi")], timeoutMs: 30_000 }),
    );
    expect(ProviderCallError.isInstance(error)).toBe(true);
    expect((error as ProviderCallError).message).toMatch(/grew past 8 MB/);
    expect(server.sent()).toBeLessThan(maximumEventChars * 4);
  });

  it("should do the same for an NDJSON line that never ends (Ollama)", async () => {
    const server = await endlessLine("application/x-ndjson", '{"message":{"role":"assistant","content":"');
    const adapter = createProvider("ollama", { baseURL: server.url });
    const error = await failureOf(
      adapter.streamChat({
        model: "m",
        messages: [textMessage(0, "user", "hi")],
        contextWindow: 4096,
        timeoutMs: 30_000,
      }),
    );
    expect(ProviderCallError.isInstance(error)).toBe(true);
    expect((error as ProviderCallError).message).toMatch(/grew past 8 MB/);
  });
});
