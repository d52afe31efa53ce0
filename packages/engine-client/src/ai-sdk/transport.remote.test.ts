import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRemoteEngine, type RemoteEngine } from "../remote/remote-engine.js";
import { bearer, type EngineServer, startEngineServer } from "../server/testing/engine-server.js";
import { nacreChatMessages } from "./chat-messages.js";
import { TestChat, textOf } from "./testing/test-chat.js";
import { createNacreTransport } from "./transport.js";

const words = (count: number, seed: string) => Array.from({ length: count }, () => seed).join(" ");

describe("createNacreTransport on the remote engine (the engine handler over real HTTP)", () => {
  let server: EngineServer;
  beforeAll(async () => {
    server = await startEngineServer({ chunkDelayMs: 3 });
  });
  afterAll(() => server?.close());

  const remote = (): Promise<RemoteEngine> => createRemoteEngine({ baseURL: server.baseURL, headers: bearer("alice") });

  it("should resume a turn still running on the server after a reload (useChat's resumeStream), once", async () => {
    // Long enough (seconds) to be still running at the reload on a loaded machine.
    const reply = words(1_500, "resumed");
    server.script.queue.push({ text: reply });
    const first = new TestChat({ id: "resume", transport: createNacreTransport(await remote()) });
    void first.sendMessage({ text: "Answer slowly" });
    await expect.poll(() => textOf(first.messages[1]).length, { timeout: 30_000 }).toBeGreaterThan(20);

    // The reload, as a page does it: a new engine and its transport, the chat loaded, then useChat's resume.
    const engine = await remote();
    const transport = createNacreTransport(engine);
    const resumed: boolean[] = [];
    const reconnect = transport.reconnectToStream.bind(transport);
    transport.reconnectToStream = async (options) => {
      const stream = await reconnect(options);
      resumed.push(stream !== null);
      return stream;
    };
    const loaded = nacreChatMessages(await engine.loadChat("resume"));
    expect(engine.isAnswering("resume")).toBe(true);
    const reloaded = new TestChat({ id: "resume", transport, messages: loaded });
    const resuming = reloaded.resumeStream();
    // Once the new transport has reconnected, the rest of the answer may come at full speed (seconds otherwise).
    await expect.poll(() => resumed.length, { timeout: 30_000 }).toBe(1);
    server.fake.setChunkDelayMs(0);
    await resuming;
    await expect.poll(() => reloaded.status, { timeout: 30_000 }).toBe("ready");
    expect(resumed).toEqual([true]);

    expect(reloaded.chatState.error).toBeUndefined();
    expect(reloaded.messages.filter((message) => message.role === "assistant").map(textOf)).toEqual([reply]);
    expect(reloaded.messages.at(-1)?.metadata).toMatchObject({ seq: 0, lastSeq: 1 });
    await reloaded.sendMessage({ text: "Thanks" });
    expect(reloaded.chatState.error).toBeUndefined();
    expect((await engine.loadChat("resume")).messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("should resume nothing when no turn runs", async () => {
    const engine = await remote();
    const transport = createNacreTransport(engine);
    expect(await transport.reconnectToStream({ chatId: "idle" })).toBeNull();
  });
});
