import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../engine.js";
import { ChatBusyError, TurnSequenceError } from "../errors.js";
import type { EngineEvent } from "../events.js";
import { bearer, type EngineServer, startEngineServer } from "../server/testing/engine-server.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { createRemoteEngine, type RemoteEngine } from "./remote-engine.js";

const words = (count: number, seed: string) =>
  Array.from({ length: count }, (_, index) => `${seed}${index % 7 === 6 ? "." : ""}`).join(" ");

/** The events of a turn with the clock's marks (times, note ids) taken out: the rest must match exactly. */
function comparable(events: readonly EngineEvent[]): unknown {
  return JSON.parse(
    JSON.stringify(events, (key, value) => {
      if (key === "at" || key === "createdAt") return 0;
      if (key === "id" && typeof value === "string" && /-\d{10,}-/.test(value)) return "note";
      return value;
    }),
  );
}

async function collect(engine: Engine, input: Parameters<Engine["sendTurn"]>[0]) {
  const events: EngineEvent[] = [];
  for await (const event of engine.sendTurn(input)) events.push(event);
  return events;
}

const textOf = (events: readonly EngineEvent[]) =>
  events.map((event) => (event.type === "text-delta" ? event.delta : "")).join("");

function remote(server: EngineServer, user: "alice" | "bob" = "alice"): Promise<RemoteEngine> {
  return createRemoteEngine({ baseURL: server.baseURL, headers: bearer(user) });
}

/** The fake provider's pause between streamed pieces: slow enough for a test to interrupt or drop a turn. */
const chunkDelayMs = 3;

describe("createRemoteEngine against the engine handler over real HTTP", () => {
  let server: EngineServer;
  beforeAll(async () => {
    server = await startEngineServer({
      models: [
        { id: "chat", window: 6_000, displayName: "Chat 6K" },
        { id: "chat-big", window: 64_000, displayName: "Chat 64K" },
        { id: "cheap", window: 128_000, displayName: "Cheap Summariser" },
      ],
      chunkDelayMs,
      // Compared event for event with an engine in process: a fold ahead would land at a moment of its own on each.
      engine: { foldAhead: false },
    });
  });
  afterAll(() => server?.close());

  it("should declare context as the server's engine does, and list the server's models", async () => {
    const engine = await remote(server);
    expect(engine.id).toBe("api");
    expect(engine.displayName).toBe("OpenRouter (fake)");
    expect(engine.capabilities.context).toBeDefined();
    expect((await engine.listModels()).map((model) => model.id)).toEqual(["chat", "chat-big", "cheap"]);
  });

  it("should play turns with a fold and a healed refusal event for event as the same engine in process", async () => {
    const inProcess = server.makeEngine(createMemoryChatStore());
    const engine = await remote(server);
    const turns = [0, 1, 2, 3, 4, 5].map((index) => ({
      text: words(420, `question${index}`),
      reply: words(260, `answer${index}`),
      refuse: index === 4,
    }));
    const play = async (target: Engine, chatId: string) => {
      const all: EngineEvent[][] = [];
      for (const [index, turn] of turns.entries()) {
        server.script.queue.push({ text: turn.reply });
        if (turn.refuse) server.fake.refuseNext(1, "openrouter", { models: ["chat"] });
        all.push(await collect(target, { chatId, seq: index * 2, text: turn.text }));
      }
      return all;
    };
    // Twelve turns and their folds, compared whole: nothing here needs a turn slow enough to interrupt, so the
    // fake provider streams without the file's pause between pieces (about 5 s of sleeping otherwise).
    server.fake.setChunkDelayMs(0);
    const [viaServer, local] = await (async () => {
      try {
        return [await play(engine, "compare"), await play(inProcess, "compare")];
      } finally {
        server.fake.setChunkDelayMs(chunkDelayMs);
      }
    })();
    const flat = viaServer.flat();
    expect(flat.some((event) => event.type === "compacted")).toBe(true);
    expect(flat.some((event) => event.type === "healed")).toBe(true);
    expect(flat.filter((event) => event.type === "turn-end").map((event) => event.status)).toEqual(
      turns.map(() => "done"),
    );
    expect(comparable(viaServer.flat())).toEqual(comparable(local.flat()));
    const [remoteChat, localChat] = await Promise.all([engine.loadChat("compare"), inProcess.loadChat("compare")]);
    expect(comparable([remoteChat as never])).toEqual(comparable([localChat as never]));
  });

  it("given a stale seq or a busy chat, should reject through the turn, never throw at once", async () => {
    const engine = await remote(server);
    server.script.queue.push({ text: "First." });
    await collect(engine, { chatId: "rules", seq: 0, text: "Hi" });
    const stale = engine.sendTurn({ chatId: "rules", seq: 7, text: "From an old tab" });
    const error = await stale.done.catch((reason: unknown) => reason);
    expect(TurnSequenceError.isInstance(error)).toBe(true);
    expect((error as TurnSequenceError).expectedSeq).toBe(2);
    await expect(collect(engine, { chatId: "rules", seq: 7, text: "x" })).rejects.toSatisfy(
      TurnSequenceError.isInstance,
    );

    server.script.queue.push({ text: words(300, "slow") });
    const running = engine.sendTurn({ chatId: "rules", seq: 2, text: "Long" });
    const other = await remote(server);
    const busy = await other
      .sendTurn({ chatId: "rules", seq: 4, text: "Me too" })
      .done.catch((reason: unknown) => reason);
    expect(ChatBusyError.isInstance(busy)).toBe(true);
    expect((await running.done).status).toBe("done");
  });

  it("given a connection dropped mid-answer, should resume from the last id and get every event once", async () => {
    const engine = await remote(server);
    const reply = words(400, "resumed");
    server.script.queue.push({ text: reply });
    server.cutNextStream(900);
    const cutsBefore = server.streamsCut();
    const events = await collect(engine, { chatId: "drop", seq: 0, text: "Tell me a long story" });
    expect(server.streamsCut()).toBe(cutsBefore + 1);
    expect(textOf(events)).toBe(reply);
    expect(events.filter((event) => event.type === "turn-start")).toHaveLength(1);
    expect(events.filter((event) => event.type === "message-end")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
  });

  it("given a page reloaded mid-answer, should show the rest of the answer on the new engine, none twice", async () => {
    const first = await remote(server);
    const reply = words(600, "reloaded");
    server.script.queue.push({ text: reply });
    const running = first.sendTurn({ chatId: "reload", seq: 0, text: "Answer slowly" });
    // Wait until a few words arrived, then "reload": a new engine, as a new page would make.
    const seen: EngineEvent[] = [];
    const unsubscribe = first.subscribe((event) => seen.push(event));
    await expect
      .poll(() => seen.filter((event) => event.type === "text-delta").length, { timeout: 30_000 })
      .toBeGreaterThan(3);
    unsubscribe();
    const reloaded = await remote(server);
    const received: EngineEvent[] = [];
    const ended = new Promise<void>((resolve) =>
      reloaded.subscribe((event) => {
        received.push(event);
        if (event.type === "turn-end") resolve();
      }),
    );
    const snapshot = await reloaded.loadChat("reload");
    expect(snapshot.messages).toEqual([]);
    await ended;
    expect(received[0]?.type).toBe("turn-start");
    expect(textOf(received)).toBe(reply);
    expect(received.filter((event) => event.type === "message-end")).toHaveLength(1);
    await running.done;
    const after = await reloaded.loadChat("reload");
    expect(after.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
  });

  it("given an abort, should end the turn aborted and close the provider's connection", async () => {
    const engine = await remote(server);
    server.script.queue.push({ text: words(3_000, "endless") });
    const closedBefore = server.providerClosedEarly();
    const controller = new AbortController();
    const stream = engine.sendTurn({ chatId: "abort", seq: 0, text: "Go", abortSignal: controller.signal });
    const seen: EngineEvent[] = [];
    const reading = (async () => {
      for await (const event of stream) {
        seen.push(event);
        if (event.type === "text-delta" && seen.length === 5) controller.abort();
      }
    })();
    const end = await stream.done;
    await reading;
    expect(end.status).toBe("aborted");
    await expect.poll(() => server.providerClosedEarly(), { timeout: 30_000 }).toBeGreaterThan(closedBefore);
    const chat = await engine.loadChat("abort");
    expect(chat.messages[0]?.role).toBe("user");
  });

  it("should compact and tell usage through the server, with the fold's events to listeners", async () => {
    const engine = await remote(server);
    for (const seq of [0, 2, 4]) {
      server.script.queue.push({ text: `Answer ${seq}` });
      await collect(engine, { chatId: "compact", seq, text: `Question ${seq}` });
    }
    const heard: string[] = [];
    engine.subscribe((event) => heard.push(event.type));
    const result = await engine.capabilities.context?.compact("compact", { keep: "the numbers" });
    expect(result?.status).toBe("compacted");
    expect(heard).toEqual(["compacting", "compacting", "compacted"]);
    const usage = await engine.capabilities.context?.usage("compact");
    expect(usage?.window).toBe(6_000);
  });

  it("withModel should talk to another model of the server", async () => {
    const engine = (await remote(server)).withModel("chat-big");
    server.script.queue.push({ text: "From the big one." });
    const events = await collect(engine, { chatId: "big", seq: 0, text: "Hi" });
    expect(events.find((event) => event.type === "message-start")).toMatchObject({ model: "chat-big" });
    expect((await engine.loadChat("big")).model.id).toBe("chat-big");
  });

  it("directory should list, rename and remove the person's own chats on the server, and no one else's", async () => {
    const bob = await remote(server, "bob");
    const alice = await remote(server, "alice");
    await collect(bob, { chatId: "bobs-list", seq: 0, text: "Bob's first words\nand more" });
    const listed = await bob.directory.list({ offset: 0, limit: 200 });
    expect(listed.chats[0]).toMatchObject({ id: "bobs-list", title: "Bob's first words" });
    expect(listed.total).toBe(listed.chats.length);
    expect((await alice.directory.list({ offset: 0, limit: 200 })).chats.map((chat) => chat.id)).not.toContain(
      "bobs-list",
    );
    expect(await alice.directory.rename("bobs-list", "Alice's")).toBe(false);
    expect(await alice.directory.remove("bobs-list")).toBe(false);
    expect(await bob.directory.rename("bobs-list", " Bob's   plans ")).toBe(true);
    expect((await bob.directory.list({ offset: 0, limit: 1 })).chats).toEqual([
      expect.objectContaining({ id: "bobs-list", title: "Bob's plans" }),
    ]);
    expect(await bob.directory.remove("bobs-list")).toBe(true);
    expect(await bob.directory.remove("bobs-list")).toBe(false);
    expect((await bob.directory.list({ offset: 0, limit: 200 })).chats.map((chat) => chat.id)).not.toContain(
      "bobs-list",
    );
  });

  it("given a listener that throws, should tell onError and still reach the turn's end", async () => {
    const reported: Array<[unknown, unknown]> = [];
    const engine = await createRemoteEngine({
      baseURL: server.baseURL,
      headers: bearer("alice"),
      onError: (error, context) => reported.push([error, context]),
    });
    const bug = new TypeError("a listener's bug");
    engine.subscribe((event) => {
      if (event.type === "turn-start") throw bug;
    });
    server.script.queue.push({ text: "Still here." });
    expect((await engine.sendTurn({ chatId: "listener", seq: 0, text: "Hi" }).done).status).toBe("done");
    expect(reported).toEqual([[bug, { during: "listener" }]]);
  });
});

describe("a server whose engine keeps no transcript", () => {
  let server: EngineServer;
  beforeAll(async () => {
    server = await startEngineServer({
      handler: {
        engineFor: () => {
          const inner = server.makeEngine(createMemoryChatStore());
          return {
            specificationVersion: "v1",
            id: "plain",
            displayName: "Plain",
            capabilities: {},
            loadChat: inner.loadChat,
            sendTurn: inner.sendTurn,
            subscribe: inner.subscribe,
          };
        },
      },
    });
  });
  afterAll(() => server?.close());

  it("should declare no context", async () => {
    const engine = await remote(server);
    expect(engine.capabilities.context).toBeUndefined();
    const response = await fetch(`${server.baseURL}/chats/x/usage`, { headers: bearer("alice") });
    expect(response.status).toBe(404);
    expect((await response.json()).type).toBe("urn:conch:problem:no-context");
  });
});
