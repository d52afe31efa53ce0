import { apiEngineUnderTest, type ContractTurn, type EngineUnderTest, mockEngineUnderTest } from "@conch/fake-provider";
import { DefaultChatTransport } from "ai";
import { type Server, serve } from "srvx";
import { afterEach, describe, expect, it } from "vitest";
import { messageText } from "../messages.js";
import { createEngineHandler } from "../server/handler.js";
import { createInProcessRunningTurns } from "../server/running-turns.js";
import { nacreDivider } from "./chat-messages.js";
import { type NacreChatRequestBody, nacreChatFetch, nacreSendMessagesRequest } from "./request-body.js";
import { createNacreChatRoute } from "./route.js";
import { TestChat, textOf } from "./testing/test-chat.js";
import type { NacreUIMessage } from "./ui-message.js";

interface RouteUnderTest {
  readonly setup: EngineUnderTest;
  readonly url: string;
  /** The wire protocol's handler, mounted beside the route on the same running turns. */
  readonly engineUrl: string;
  /** The bodies the page sent, parsed. */
  readonly sent: NacreChatRequestBody[];
  chat(id: string, messages?: NacreUIMessage[]): TestChat;
  load(id: string): Promise<NacreUIMessage[]>;
  log(id: string): Promise<string[]>;
}

let running: { server: Server; setup: EngineUnderTest } | null = null;
afterEach(async () => {
  await running?.server.close(true);
  await running?.setup.close?.();
  running = null;
});

/** The route on the API engine over the fake provider, on loopback, and `useChat`'s HTTP transport to it. */
async function routeUnderTest(
  turns: readonly ContractTurn[],
  makeEngine: (turns: readonly ContractTurn[]) => Promise<EngineUnderTest> = apiEngineUnderTest,
): Promise<RouteUnderTest> {
  const setup = await makeEngine(turns);
  const runningTurns = createInProcessRunningTurns();
  const route = createNacreChatRoute(setup.engine, { runningTurns, userId: () => "me" });
  const engineHandler = createEngineHandler({
    basePath: "/api/engine",
    engineFor: () => setup.engine,
    authorize: () => ({ userId: "me" }),
    runningTurns,
  });
  const server = serve({
    fetch: (request) =>
      new URL(request.url).pathname.startsWith("/api/engine/") ? engineHandler(request) : route(request),
    port: 0,
    hostname: "127.0.0.1",
    silent: true,
    gracefulShutdown: false,
  });
  await server.ready();
  running = { server, setup };
  const url = new URL("/api/chat", server.url as string).href;
  const engineUrl = new URL("/api/engine", server.url as string).href;
  const sent: NacreChatRequestBody[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    if (typeof init?.body === "string") sent.push(JSON.parse(init.body) as NacreChatRequestBody);
    return nacreChatFetch(input, init);
  };
  const load = async (id: string) =>
    ((await (await fetch(`${url}?id=${id}`)).json()) as { messages: NacreUIMessage[] }).messages;
  return {
    setup,
    url,
    engineUrl,
    sent,
    load,
    chat: (id, messages = []) =>
      new TestChat({
        id,
        messages,
        transport: new DefaultChatTransport({
          api: url,
          fetch: recordingFetch,
          prepareSendMessagesRequest: nacreSendMessagesRequest,
        }),
      }),
    async log(id) {
      return (await setup.engine.loadChat(id)).messages.map((m) => `${m.seq} ${m.role} ${messageText(m)}`);
    },
  };
}

describe("createNacreChatRoute behind useChat's HTTP transport (real HTTP on loopback)", () => {
  it("should run turns from the last message and the seq alone, and load the same chat for a reload", async () => {
    const route = await routeUnderTest([{ reply: "Hello." }, { reply: "Fine." }]);
    const chat = route.chat("http");

    await chat.sendMessage({ text: "Hi" });
    await chat.sendMessage({ text: "How are you?" });

    expect(chat.chatState.error).toBeUndefined();
    expect(chat.messages.map(textOf)).toEqual(["Hi", "Hello.", "How are you?", "Fine."]);
    expect(route.sent.map((body) => [body.id, body.seq, body.message.role, Object.keys(body).sort()])).toEqual([
      ["http", 0, "user", ["id", "message", "seq", "trigger"]],
      ["http", 2, "user", ["id", "message", "seq", "trigger"]],
    ]);
    expect(await route.log("http")).toEqual([
      "0 user Hi",
      "1 assistant Hello.",
      "2 user How are you?",
      "3 assistant Fine.",
    ]);
    const loaded = await route.load("http");
    expect(loaded.map(textOf)).toEqual(chat.messages.map(textOf));
    expect(loaded.at(-1)?.metadata).toMatchObject({ seq: 2, lastSeq: 3 });
  });

  it("should answer a stale tab with the wire protocol's 409, writing nothing", async () => {
    const route = await routeUnderTest([{ reply: "One." }, { reply: "Two." }]);
    const first = route.chat("stale");
    await first.sendMessage({ text: "First" });
    const staleTab = route.chat("stale", await route.load("stale"));
    await first.sendMessage({ text: "Second" });
    const log = await route.log("stale");

    const response = await fetch(route.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        id: "stale",
        trigger: "submit-message",
        seq: 2,
        message: { id: "x", role: "user", parts: [{ type: "text", text: "From the other tab" }] },
      }),
    });
    expect(response.status).toBe(409);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toMatchObject({ type: "urn:conch:problem:stale-seq", status: 409, nextSeq: 4 });

    await staleTab.sendMessage({ text: "From the other tab" });
    expect(staleTab.chatState.error).toBeDefined();
    expect(await route.log("stale")).toEqual(log);
  });

  it("should refuse an edit and a regenerate of a kept answer with a 400 on an engine without versions, writing nothing", async () => {
    // The API engine as one that keeps no versions: the same engine, without its branches capability.
    const withoutBranches = async (turns: readonly ContractTurn[]): Promise<EngineUnderTest> => {
      const setup = await apiEngineUnderTest(turns);
      const { branches: _, ...capabilities } = setup.engine.capabilities;
      return { ...setup, engine: { ...setup.engine, capabilities } };
    };
    const route = await routeUnderTest([{ reply: "One." }], withoutBranches);
    const chat = route.chat("edit");
    await chat.sendMessage({ text: "First" });
    const log = await route.log("edit");

    await chat.regenerate();
    expect(chat.chatState.error?.message).toMatch(/answered again/);
    const edited = route.chat("edit", await route.load("edit"));
    await edited.sendMessage({ text: "Changed", messageId: "nacre-user-0" });
    expect(edited.chatState.error?.message).toMatch(/cannot be edited/);
    expect(await route.log("edit")).toEqual(log);
  });

  it("should take an edit and a regenerate as new versions on an engine that keeps them (the mock engine)", async () => {
    const route = await routeUnderTest(
      [{ reply: "One." }, { reply: "Two." }, { reply: "Two again." }, { reply: "New." }],
      mockEngineUnderTest,
    );
    const chat = route.chat("versions");
    await chat.sendMessage({ text: "First" });
    await chat.sendMessage({ text: "Second" });
    await chat.regenerate();
    expect(chat.chatState.error).toBeUndefined();
    expect(route.sent.at(-1)).toMatchObject({ trigger: "regenerate-message", seq: 2 });
    expect(
      chat.messages.map((message) =>
        message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(""),
      ),
    ).toEqual(["First", "One.", "Second", "Two again."]);
    // The page sends the id of the message it replaces; the route gives the new version the log's next seq.
    const firstId = chat.messages[2]?.id as string;
    await chat.sendMessage({ text: "Second, changed", messageId: firstId });
    expect(chat.chatState.error).toBeUndefined();
    expect(route.sent.at(-1)).toMatchObject({ trigger: "submit-message", messageId: firstId, seq: 2 });
    expect(await route.log("versions")).toEqual([
      "0 user First",
      "1 assistant One.",
      "5 user Second, changed",
      "6 assistant New.",
    ]);
    // A reload loads the active branch, with the log's next seq on its last message.
    const loaded = await route.load("versions");
    expect(loaded.map((message) => message.id)).toEqual([
      "nacre-user-0",
      "nacre-answer-0",
      "nacre-user-5",
      "nacre-answer-5",
    ]);
    expect(loaded.at(-1)?.metadata).toMatchObject({ nextSeq: 7 });
    // The page learns that the engine keeps versions, so that it offers Edit and Regenerate.
    expect(((await (await fetch(`${route.url}?id=versions`)).json()) as { versions: boolean }).versions).toBe(true);
  });

  it("should stop the turn when the page stops the request, keeping what was written", async () => {
    const route = await routeUnderTest([{ reply: "A long story. ".repeat(300), slow: true }, { reply: "Next." }]);
    const chat = route.chat("stop");
    const sending = chat.sendMessage({ text: "Tell me a story" });
    await expect.poll(() => textOf(chat.messages[1]).length, { timeout: 20_000 }).toBeGreaterThan(0);
    await chat.stop();
    await sending;

    // The stop's own request ends the server's turn; the page then reads the chat as the log keeps it.
    expect((await fetch(`${route.url}/stop/stream`)).status).toBe(204);
    await expect.poll(async () => (await route.log("stop")).at(-1), { timeout: 20_000 }).toMatch(/^1 assistant A long/);
    const kept = (await route.log("stop")).at(-1) ?? "";
    expect(kept.length).toBeLessThan("1 assistant ".length + "A long story. ".repeat(300).length);
    chat.messages = await route.load("stop");
    await chat.sendMessage({ text: "Next" });
    expect(chat.chatState.error).toBeUndefined();
    expect((await route.log("stop")).slice(2)).toEqual(["2 user Next", "3 assistant Next."]);
  });

  it("should answer a body that is not a turn with a problem", async () => {
    const route = await routeUnderTest([]);
    const response = await fetch(route.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "bad", seq: -1 }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: "urn:conch:problem:invalid-body" });
    // useChat's reconnect with nothing running: nothing to resume.
    expect((await fetch(`${route.url}/bad/stream`)).status).toBe(204);
  });

  it("should keep a turn running when its request drops (a reload) and resume it whole, each part once", async () => {
    const story = "A long story. ".repeat(300);
    const route = await routeUnderTest([{ reply: story, slow: true }, { reply: "Next." }]);
    // A page that goes away: its request closes, and nothing asks the route to stop.
    const leaving = new TestChat({
      id: "reload",
      transport: new DefaultChatTransport({
        api: route.url,
        prepareSendMessagesRequest: nacreSendMessagesRequest,
      }),
    });
    const sending = leaving.sendMessage({ text: "Tell me a story" });
    await expect.poll(() => textOf(leaving.messages[1]).length, { timeout: 20_000 }).toBeGreaterThan(0);
    await leaving.stop();
    await sending;

    // The running turn is the wire protocol's too: a second writer there is refused.
    const wireTurn = await fetch(`${route.engineUrl}/chats/reload/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ seq: 1, text: "From elsewhere" }),
    });
    expect(wireTurn.status).toBe(409);
    // And the wire protocol's events endpoint reads it from its turn-start.
    const events = await fetch(`${route.engineUrl}/chats/reload/events`);
    expect(events.status).toBe(200);
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let read = "";
    while (!read.includes("turn-start")) {
      const next = await reader.read();
      if (next.done) break;
      read += decoder.decode(next.value, { stream: true });
    }
    await reader.cancel();
    expect(read).toContain("turn-start");

    const reloaded = route.chat("reload", await route.load("reload"));
    await reloaded.resumeStream();
    expect(reloaded.chatState.error).toBeUndefined();
    expect(reloaded.messages.map((message) => [message.id, textOf(message)])).toEqual([
      ["nacre-user-0", "Tell me a story"],
      ["nacre-answer-0", story],
    ]);
    expect(await route.log("reload")).toEqual(["0 user Tell me a story", `1 assistant ${story}`]);
    expect((await fetch(`${route.url}/reload/stream`)).status).toBe(204);

    await reloaded.sendMessage({ text: "Next" });
    expect((await route.log("reload")).slice(2)).toEqual(["2 user Next", "3 assistant Next."]);
  });

  it("should run /compact as the engine's fold, never a message, and show it as the fold part", async () => {
    const route = await routeUnderTest([{ reply: "One." }, { reply: "Two." }, { reply: "Three." }, { reply: "Four." }]);
    const chat = route.chat("compact");
    for (const text of ["First", "Second", "Third"]) await chat.sendMessage({ text });
    const before = await route.log("compact");

    await chat.sendMessage({ text: "/compact the numbers" });
    expect(chat.chatState.error).toBeUndefined();
    const folds = chat.messages.flatMap((message) =>
      message.parts.flatMap((part) => (part.type === "data-nacre-fold" ? [part.data] : [])),
    );
    expect(folds).toHaveLength(1);
    expect(folds[0]).toMatchObject({ status: "compacted", reason: "manual" });
    // The divider before the newest turn, which the fold kept.
    const dividerBefore = nacreDivider(chat.messages)?.beforeMessageId;
    expect(textOf(chat.messages.find((message) => message.id === dividerBefore))).toBe("Third");
    // The log keeps no message for the command; the model never saw it.
    expect(await route.log("compact")).toEqual(before);
    expect((await route.setup.engine.loadChat("compact")).summary?.reason).toBe("manual");

    await chat.sendMessage({ text: "Fourth" });
    expect(chat.chatState.error).toBeUndefined();
    expect((await route.log("compact")).slice(6)).toEqual(["6 user Fourth", "7 assistant Four."]);
    const loaded = await route.load("compact");
    expect(nacreDivider(loaded)?.beforeMessageId).toBe("nacre-user-4");
  });
});
