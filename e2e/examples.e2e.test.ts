import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider } from "@conch/engine-client";
import { createRemoteEngine } from "@conch/engine-client/remote";
import { type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleServer } from "../examples/node-server.js";

const apiKey = "sk-example-0123456789-secret";

describe("examples/: the handler mounted in a Node server and as a Next.js route", () => {
  let fake: FakeProvider;
  let folder: string;
  beforeAll(async () => {
    fake = await startFakeProvider({ dialect: "openai", apiKey, reply: { text: "Hello from the example." } });
    folder = await mkdtemp(join(tmpdir(), "examples-"));
  });
  afterAll(async () => {
    await fake?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("node-server.ts should answer a remote engine's turn over HTTP, for a signed-in person only", async () => {
    const server = createExampleServer({
      provider: createProvider("openai", { baseURL: fake.baseURL, apiKey, local: false }),
      model: "fake-model",
      dataDir: join(folder, "node"),
      people: new Map([["token-of-me", "me"]]),
      apiKey,
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const baseURL = `http://127.0.0.1:${port}/api/engine`;
      expect((await fetch(`${baseURL}/capabilities`)).status).toBe(401);
      const engine = await createRemoteEngine({ baseURL, headers: { authorization: "Bearer token-of-me" } });
      const end = await engine.sendTurn({ chatId: "c1", seq: 0, text: "Hi" }).done;
      expect(end.status).toBe("done");
      const chat = await engine.loadChat("c1");
      expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
      expect((await engine.listChats()).chats.map((listed) => listed.id)).toEqual(["c1"]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("next-route.ts should export the handler for each method, answering web-standard Requests", async () => {
    process.env.ENGINE_TOKEN = "next-token-123";
    process.env.ENGINE_DATA_DIR = join(folder, "next");
    const route = await import("../examples/next-route.js");
    const authorized = { authorization: "Bearer next-token-123" };
    const capabilities = await route.GET(
      new Request("http://localhost/api/engine/capabilities", { headers: authorized }),
    );
    expect(await capabilities.json()).toMatchObject({ protocol: 1, context: true });
    const chat = await route.GET(new Request("http://localhost/api/engine/chats/new-one", { headers: authorized }));
    expect(((await chat.json()) as { snapshot: { messages: unknown[] } }).snapshot.messages).toEqual([]);
    const refused = await route.POST(new Request("http://localhost/api/engine/chats/x/turns", { method: "POST" }));
    expect(refused.status).toBe(401);
    expect(route.DELETE).toBe(route.GET);
  });
});
