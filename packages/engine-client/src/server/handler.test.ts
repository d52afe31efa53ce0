import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { readEventStream } from "../protocol/event-stream.js";
import type {
  WireCapabilities,
  WireChatList,
  WireChatPage,
  WireModels,
  WireProblem,
  WireRenameResponse,
} from "../protocol/wire.js";
import { bearer, type EngineServer, startEngineServer, testApiKey } from "./testing/engine-server.js";

/** Every body and header the server sent in these tests, to look for the provider's key. */
const seen: string[] = [];

async function call(
  server: EngineServer,
  path: string,
  init: RequestInit & { user?: "alice" | "bob" | null } = {},
): Promise<Response> {
  const { user = "alice", headers, ...rest } = init;
  const response = await fetch(`${server.baseURL}${path}`, {
    ...rest,
    headers: { ...(user ? bearer(user) : {}), ...(headers as Record<string, string> | undefined) },
  });
  seen.push(JSON.stringify([...response.headers]));
  return response;
}

async function text(response: Response): Promise<string> {
  const body = await response.text();
  seen.push(body);
  return body;
}

async function problemOf(response: Response): Promise<WireProblem> {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const problem = JSON.parse(await text(response)) as WireProblem;
  expect(problem.status).toBe(response.status);
  expect(problem.type).toMatch(/^urn:conch:problem:/);
  expect(JSON.stringify(problem)).not.toMatch(/\bat .*\.(ts|js):\d+/);
  return problem;
}

function postJson(body: unknown, user: "alice" | "bob" | null = "alice"): RequestInit & { user: typeof user } {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), user };
}

interface Received {
  readonly id: string;
  readonly event: EngineEvent;
}

/** Reads SSE events until `turn-end` (or `stopAfter` events, then drops the connection). */
async function readTurn(response: Response, options: { stopAfter?: number; controller?: AbortController } = {}) {
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const received: Received[] = [];
  for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
    seen.push(message.data);
    const event = JSON.parse(message.data) as EngineEvent;
    received.push({ id: message.id as string, event });
    if (event.type === "turn-end") break;
    if (options.stopAfter !== undefined && received.length >= options.stopAfter) {
      options.controller?.abort();
      break;
    }
  }
  return received;
}

const textOf = (received: readonly Received[]) =>
  received.map(({ event }) => (event.type === "text-delta" ? event.delta : "")).join("");

async function chat(server: EngineServer, chatId: string, user: "alice" | "bob" = "alice", query = "") {
  const response = await call(server, `/chats/${chatId}${query}`, { user });
  expect(response.status).toBe(200);
  return JSON.parse(await text(response)) as WireChatPage;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("The condition never held");
}

const longReply = Array.from({ length: 60 }, (_, index) => `Sentence number ${index + 1} of a long answer.`).join(" ");

describe("the engine handler over real HTTP, endpoint by endpoint", () => {
  let server: EngineServer;
  beforeAll(async () => {
    server = await startEngineServer({
      chunkDelayMs: 5,
      handler: { maxBodyBytes: 64_000, allowedOrigins: ["https://app.example"] },
    });
  });
  afterAll(async () => {
    await server?.close();
    // Whatever happened above, the provider's key was in nothing the server sent.
    expect(seen.length).toBeGreaterThan(50);
    for (const body of seen) expect(body).not.toContain(testApiKey);
  });

  it("GET /capabilities should name the protocol, the engine and whether it has context and branches", async () => {
    const body = JSON.parse(await text(await call(server, "/capabilities"))) as WireCapabilities;
    expect(body).toEqual({
      protocol: 1,
      engine: { id: "api", displayName: "OpenRouter (fake)" },
      context: true,
      branches: true,
      eventsUntilIdle: true,
    });
    // `until` names when a follow ends: only `idle` is known.
    const unknown = await call(server, "/chats/c1/events?until=soon");
    expect(unknown.status).toBe(400);
    expect(await problemOf(unknown)).toMatchObject({ type: "urn:conch:problem:bad-request" });
  });

  it("GET /models should list the ready models with their windows", async () => {
    const body = JSON.parse(await text(await call(server, "/models"))) as WireModels;
    expect(body.models.map((model) => [model.id, model.context])).toEqual([
      ["chat", 64_000],
      ["cheap", 128_000],
    ]);
  });

  it("should refuse a request without a known token with 401 problem+json", async () => {
    for (const headers of [{}, { authorization: "Bearer nope" }] as Record<string, string>[]) {
      const response = await call(server, "/capabilities", { user: null, headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await problemOf(response)).type).toBe("urn:conch:problem:unauthorized");
    }
  });

  it("POST /turns should stream one SSE event per engine event, ids increasing, ending with turn-end", async () => {
    server.script.queue.push({ text: "Hello! How can I help?" });
    const received = await readTurn(await call(server, "/chats/first/turns", postJson({ seq: 0, text: "Hi" })));
    const types = received.map(({ event }) => event.type).filter((type) => type !== "text-delta");
    expect(types).toEqual(["turn-start", "message-start", "usage", "message-end", "turn-end"]);
    expect(textOf(received)).toBe("Hello! How can I help?");
    const ids = received.map(({ id }) => Number(id));
    expect(ids.every((id, index) => index === 0 || id > (ids[index - 1] as number))).toBe(true);

    const page = await chat(server, "first");
    expect(page.snapshot.messages.map((message) => [message.seq, message.role])).toEqual([
      [0, "user"],
      [1, "assistant"],
    ]);
    expect(page.running).toBe(false);
    expect(page.cursor).toBe(received.at(-1)?.id);
    expect(page.snapshot.contextUsage?.window).toBe(64_000);

    server.script.queue.push({ text: "Second answer." });
    const second = await readTurn(await call(server, "/chats/first/turns", postJson({ seq: 2, text: "Again" })));
    expect(Number(second[0]?.id)).toBeGreaterThan(Number(received.at(-1)?.id));
  });

  it("GET /chats/{id} should give an empty chat for an id never used, and pages of older messages", async () => {
    const empty = await chat(server, "never-used");
    expect(empty.snapshot.messages).toEqual([]);
    expect(empty.cursor).toBeNull();
    expect(empty.hasOlder).toBe(false);

    const store = server.storeOf("alice");
    await store.appendLog(
      "paged",
      Array.from({ length: 25 }, (_, seq) => ({
        seq,
        role: seq % 2 === 0 ? ("user" as const) : ("assistant" as const),
        parts: [{ type: "text" as const, text: `message ${seq}` }],
      })),
    );
    const newest = await chat(server, "paged", "alice", "?limit=10");
    expect(newest.snapshot.messages.map((message) => message.seq)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
    expect(newest.hasOlder).toBe(true);
    const older = await chat(server, "paged", "alice", "?before=15&limit=10");
    expect(older.snapshot.messages.map((message) => message.seq)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    const oldest = await chat(server, "paged", "alice", "?before=5&limit=10");
    expect(oldest.snapshot.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(oldest.hasOlder).toBe(false);
    expect((await problemOf(await call(server, "/chats/paged?limit=ten"))).status).toBe(400);
  });

  it("should refuse a stale seq with 409 and the chat's next seq, writing nothing", async () => {
    server.script.queue.push({ text: "One." });
    await readTurn(await call(server, "/chats/stale/turns", postJson({ seq: 0, text: "Hi" })));
    const requests = server.fake.chatRequests().length;
    for (const seq of [0, 1, 5]) {
      const response = await call(server, "/chats/stale/turns", postJson({ seq, text: "From another tab" }));
      expect(response.status).toBe(409);
      const problem = await problemOf(response);
      expect(problem.type).toBe("urn:conch:problem:stale-seq");
      expect(problem.nextSeq).toBe(2);
    }
    // A retry must name a person's message on the active branch: the answer at 1 is not one.
    const retry = await call(server, "/chats/stale/turns", postJson({ seq: 1, retry: true }));
    expect(retry.status).toBe(409);
    await text(retry);
    // Nothing refused runs later: once a next turn has ended, the chat holds it alone and the provider saw it only.
    server.script.queue.push({ text: "Two." });
    const next = await readTurn(await call(server, "/chats/stale/turns", postJson({ seq: 2, text: "Next" })));
    expect(next.at(-1)?.event).toMatchObject({ type: "turn-end", status: "done" });
    expect((await chat(server, "stale")).snapshot.messages).toHaveLength(4);
    expect(server.fake.chatRequests().length).toBe(requests + 1);
  });

  it("should refuse a second turn on a chat while one runs with 409 busy, never queue it", async () => {
    server.script.queue.push({ text: longReply });
    const controller = new AbortController();
    const first = await call(server, "/chats/busy/turns", {
      ...postJson({ seq: 0, text: "Long one" }),
      signal: controller.signal,
    });
    const busy = await call(server, "/chats/busy/turns", postJson({ seq: 0, text: "Again" }));
    expect(busy.status).toBe(409);
    expect((await problemOf(busy)).type).toBe("urn:conch:problem:busy");
    const received = await readTurn(first);
    expect(received.at(-1)?.event).toMatchObject({ type: "turn-end", status: "done" });
    // Not queued: a next turn, once ended, follows the first alone ("Again" would have run before it).
    server.script.queue.push({ text: "Two." });
    const next = await readTurn(await call(server, "/chats/busy/turns", postJson({ seq: 2, text: "Next" })));
    expect(next.at(-1)?.event).toMatchObject({ type: "turn-end", status: "done" });
    const messages = (await chat(server, "busy")).snapshot.messages;
    expect(messages.filter((message) => message.role === "user").map((message) => message.parts)).toEqual([
      [{ type: "text", text: "Long one" }],
      [{ type: "text", text: "Next" }],
    ]);
  });

  it("given a regenerate of an earlier message running, GET should stop before it and its events bring the new branch", async () => {
    server.script.queue.push({ text: "First answer." }, { text: "Second answer." });
    await readTurn(await call(server, "/chats/regen/turns", postJson({ seq: 0, text: "One" })));
    await readTurn(await call(server, "/chats/regen/turns", postJson({ seq: 2, text: "Two" })));
    server.script.queue.push({ text: longReply });
    const regenerating = await call(server, "/chats/regen/turns", postJson({ seq: 0, retry: true }));
    expect(regenerating.status).toBe(200);
    const during = await chat(server, "regen");
    expect(during.running).toBe(true);
    // The turn answers the message at 0: the page stops before it, and the events from the cursor bring it in.
    expect(during.snapshot.messages).toEqual([]);
    const events = await readTurn(
      await call(server, `/chats/regen/events?after=${during.cursor ?? ""}`, { headers: {} }),
    );
    expect(events[0]?.event).toMatchObject({ type: "turn-start", message: { seq: 0 } });
    expect(events.find(({ event }) => event.type === "message-end")?.event).toMatchObject({
      message: { seq: 4, parent: 0 },
    });
    await readTurn(regenerating);
    const after = await chat(server, "regen");
    expect(after.snapshot.messages.map((message) => [message.seq, message.siblings])).toEqual([
      [0, undefined],
      [4, [1, 4]],
    ]);
    expect(after.snapshot).toMatchObject({ nextSeq: 5, activeLeaf: 4 });
    // A parent that is no message: a stale seq, with where the next message goes.
    const staleParent = await call(server, "/chats/regen/turns", postJson({ seq: 5, parent: 99, text: "x" }));
    expect(staleParent.status).toBe(409);
    expect(await problemOf(staleParent)).toMatchObject({ type: "urn:conch:problem:stale-seq", nextSeq: 5 });
    const back = await call(server, "/chats/regen/branch", postJson({ seq: 1 }));
    expect(back.status).toBe(200);
    const first = JSON.parse(await text(back)) as WireChatPage;
    expect(first.snapshot.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3]);
  });

  it("given two people with the same chat id, should keep each one's chat to them", async () => {
    server.script.queue.push({ text: "Alice's answer." });
    await readTurn(await call(server, "/chats/shared-id/turns", postJson({ seq: 0, text: "Alice's secret plan" })));
    const bobs = await chat(server, "shared-id", "bob");
    expect(bobs.snapshot.messages).toEqual([]);
    server.script.queue.push({ text: "Bob's answer." });
    const received = await readTurn(
      await call(server, "/chats/shared-id/turns", postJson({ seq: 0, text: "Bob's words" }, "bob")),
    );
    expect(received.at(-1)?.event).toMatchObject({ type: "turn-end", status: "done" });
    const alices = await chat(server, "shared-id", "alice");
    const bobsNow = await chat(server, "shared-id", "bob");
    expect(JSON.stringify(bobsNow)).not.toContain("Alice's secret plan");
    expect(JSON.stringify(alices)).not.toContain("Bob's words");
    // Bob's view of the chat's events: his own last turn, read to its end, and nothing of Alice's in it.
    const controller = new AbortController();
    const events = await call(server, "/chats/shared-id/events?after=0", { user: "bob", signal: controller.signal });
    const seen: string[] = [];
    for await (const message of readEventStream(events.body as ReadableStream<Uint8Array>)) {
      seen.push(message.data);
      if ((JSON.parse(message.data) as { type?: string }).type === "turn-end") break;
    }
    controller.abort();
    expect(seen.join("\n")).toContain("Bob's answer.");
    expect(seen.join("\n")).not.toContain("Alice");
    const list = JSON.parse(await text(await call(server, "/chats?limit=100", { user: "bob" }))) as WireChatList;
    expect(list.chats.map((listed) => listed.id)).toEqual(["shared-id"]);
  });

  it("GET /chats should list the person's chats newest first, paged, and DELETE should remove one whole", async () => {
    const all = JSON.parse(await text(await call(server, "/chats?limit=100"))) as WireChatList;
    expect(all.chats.length).toBeGreaterThanOrEqual(4);
    const updated = all.chats.map((listed) => listed.updated);
    expect([...updated].sort((a, b) => b - a)).toEqual(updated);
    expect(all.chats.find((listed) => listed.id === "shared-id")?.title).toBe("Alice's secret plan");
    const firstPage = JSON.parse(await text(await call(server, "/chats?limit=2"))) as WireChatList;
    expect(firstPage.chats).toHaveLength(2);
    expect(firstPage.nextOffset).toBe(2);

    const removed = await call(server, "/chats/shared-id", { method: "DELETE" });
    expect(removed.status).toBe(204);
    expect((await chat(server, "shared-id")).snapshot.messages).toEqual([]);
    expect((await chat(server, "shared-id", "bob")).snapshot.messages).toHaveLength(2);
    expect((await problemOf(await call(server, "/chats/shared-id", { method: "DELETE" }))).status).toBe(404);
  });

  it("PATCH /chats/{id} should rename the person's own chat only, keep it in its place, and refuse a title with no words", async () => {
    const patch = (chatId: string, body: unknown, user: "alice" | "bob" = "alice") =>
      call(server, `/chats/${chatId}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        user,
      });
    const listOf = async (user: "alice" | "bob") =>
      (JSON.parse(await text(await call(server, "/chats?limit=100", { user }))) as WireChatList).chats;
    const before = await listOf("alice");
    const mine = before[1]?.id as string;
    const renamed = await patch(mine, { title: "  The plan\t for Lisbon\nsecond line" });
    expect(renamed.status).toBe(200);
    expect(JSON.parse(await text(renamed))).toEqual({
      id: mine,
      title: "The plan for Lisbon",
    } satisfies WireRenameResponse);
    const after = await listOf("alice");
    expect(after.map((listed) => listed.id)).toEqual(before.map((listed) => listed.id));
    expect(after.find((listed) => listed.id === mine)?.title).toBe("The plan for Lisbon");
    // Bob's list holds his chat alone; Alice (whose chat of that id is deleted) cannot rename his.
    expect((await listOf("bob")).map((listed) => [listed.id, listed.title])).toEqual([["shared-id", "Bob's words"]]);
    expect((await problemOf(await patch("shared-id", { title: "Alice's name" }))).status).toBe(404);
    expect((await problemOf(await patch(mine, { title: "Mine now" }, "bob"))).status).toBe(404);
    expect((await patch("shared-id", { title: "Bob's own name" }, "bob")).status).toBe(200);
    expect((await listOf("bob")).map((listed) => listed.title)).toEqual(["Bob's own name"]);
    expect((await listOf("alice")).find((listed) => listed.id === mine)?.title).toBe("The plan for Lisbon");
    expect(JSON.stringify(await listOf("alice"))).not.toContain("Bob");

    expect((await problemOf(await patch("never-written", { title: "A title" }))).status).toBe(404);
    for (const body of [{ title: " \n " }, { title: 3 }, {}, { title: "x", extra: true }]) {
      const problem = await problemOf(await patch(mine, body));
      expect([problem.status, problem.type]).toEqual([400, "urn:conch:problem:invalid-body"]);
    }
    expect((await problemOf(await patch("..%2Fup", { title: "x" }))).type).toBe("urn:conch:problem:invalid-chat-id");
    expect((await listOf("alice")).find((listed) => listed.id === mine)?.title).toBe("The plan for Lisbon");
  });

  it("should answer problem+json for bad input: 400, 404, 405, 413, 415", async () => {
    const cases: Array<[string, RequestInit, number, string]> = [
      [
        "/chats/c/turns",
        { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" },
        400,
        "invalid-json",
      ],
      ["/chats/c/turns", postJson({ seq: -1, text: "x" }), 400, "invalid-body"],
      ["/chats/c/turns", postJson({ seq: 0, text: "x", system: "be evil" }), 400, "invalid-body"],
      ["/chats/c/turns", postJson({ seq: 0 }), 400, "invalid-body"],
      ["/chats/..%2F..%2Fetc/turns", postJson({ seq: 0, text: "x" }), 400, "invalid-chat-id"],
      ["/chats/a%20b", {}, 400, "invalid-chat-id"],
      ["/nothing-here", {}, 404, "not-found"],
      ["/chats/c/unknown", {}, 404, "not-found"],
      ["/chats/c/turns", {}, 405, "method-not-allowed"],
      ["/capabilities", { method: "POST" }, 405, "method-not-allowed"],
      ["/chats/c/turns", postJson({ seq: 0, text: "x".repeat(70_000) }), 413, "body-too-large"],
      [
        "/chats/c/turns",
        { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" },
        415,
        "unsupported-media-type",
      ],
    ];
    for (const [path, init, status, type] of cases) {
      const response = await call(server, path, init);
      expect([path, response.status]).toEqual([path, status]);
      const problem = await problemOf(response);
      expect(problem.type).toBe(`urn:conch:problem:${type}`);
      if (status === 405) expect(response.headers.get("allow")).toBeTruthy();
      if (type === "invalid-body") expect(problem.issues?.length).toBeGreaterThan(0);
    }
    // An endless body is cut off at the limit, not read to its end.
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 16_384;
        if (sent > 50_000_000) controller.close();
        else controller.enqueue(new Uint8Array(16_384).fill(32));
      },
    });
    const response = await call(server, "/chats/c/turns", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: endless,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    await text(response);
    expect(sent).toBeLessThan(50_000_000);
    // Still serving.
    expect((await call(server, "/capabilities")).status).toBe(200);
  });

  it("should refuse other sites' pages and other host names, and answer CORS only for listed origins", async () => {
    const evil = await call(server, "/capabilities", { headers: { origin: "https://evil.example" } });
    expect(evil.status).toBe(403);
    expect((await problemOf(evil)).type).toBe("urn:conch:problem:forbidden-origin");
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    const crossSite = await call(server, "/capabilities", { headers: { "sec-fetch-site": "cross-site" } });
    expect(crossSite.status).toBe(403);
    await text(crossSite);
    const sameOrigin = await call(server, "/capabilities", {
      headers: { origin: server.origin, "sec-fetch-site": "same-origin" },
    });
    expect(sameOrigin.status).toBe(200);
    await text(sameOrigin);

    const listed = await call(server, "/capabilities", {
      headers: { origin: "https://app.example", "sec-fetch-site": "cross-site" },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    await text(listed);
    const preflight = await call(server, "/chats/c/turns", {
      method: "OPTIONS",
      user: null,
      headers: { origin: "https://app.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
    const evilPreflight = await call(server, "/chats/c/turns", {
      method: "OPTIONS",
      user: null,
      headers: { origin: "https://evil.example" },
    });
    expect(evilPreflight.status).toBe(403);
    await text(evilPreflight);

    // DNS rebinding: the page's own origin, but a host name that is not this server's.
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${server.baseURL}/capabilities`);
      const request = httpRequest(
        url,
        {
          headers: {
            host: `rebind.example:${url.port}`,
            origin: `http://rebind.example:${url.port}`,
            ...bearer("alice"),
          },
        },
        (response) => {
          let body = "";
          response.on("data", (chunk) => {
            body += String(chunk);
          });
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on("error", reject);
      request.end();
    });
    seen.push(rebound.body);
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).type).toBe("urn:conch:problem:forbidden-host");
  });

  it("given a provider error that echoes the key, should never send the key on", async () => {
    server.fake.failNext(1, {
      type: "status",
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${testApiKey}.`, type: "invalid_request_error" } },
    });
    const received = await readTurn(await call(server, "/chats/keyed/turns", postJson({ seq: 0, text: "Hi" })));
    expect(received.some(({ event }) => event.type === "turn-problem")).toBe(true);
    expect(received.at(-1)?.event).toMatchObject({ type: "turn-end", status: "problem" });
    const page = await text(await call(server, "/chats/keyed"));
    expect(page).not.toContain(testApiKey);
  });

  it("GET /events with Last-Event-ID should give the rest of a turn after a dropped connection, none twice", async () => {
    server.script.queue.push({ text: longReply });
    const controller = new AbortController();
    const response = await call(server, "/chats/resume/turns", {
      ...postJson({ seq: 0, text: "Tell me" }),
      signal: controller.signal,
    });
    const before = await readTurn(response, { stopAfter: 6, controller });
    expect(before.at(-1)?.event.type).not.toBe("turn-end");
    const midway = await chat(server, "resume");
    expect(midway.running).toBe(true);
    // The snapshot stops before the running turn; its events after the cursor bring the turn in.
    expect(midway.snapshot.messages).toEqual([]);

    const rest = await readTurn(
      await call(server, "/chats/resume/events", { headers: { "last-event-id": before.at(-1)?.id as string } }),
    );
    const all = [...before, ...rest];
    const ids = all.map(({ id }) => id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map(Number)).toEqual([...ids.map(Number)].sort((a, b) => a - b));
    expect(textOf(all)).toBe(longReply);
    expect(all.at(-1)?.event).toMatchObject({ type: "turn-end", status: "done" });

    // From the reload's cursor (?after=), the whole turn, beginning with its turn-start.
    const replay = await readTurn(await call(server, `/chats/resume/events?after=${midway.cursor}`));
    expect(replay[0]?.event.type).toBe("turn-start");
    expect(replay.map(({ id }) => id)).toEqual(ids);
    expect((await problemOf(await call(server, "/chats/resume/events?after=%22bad%22"))).status).toBe(400);
  });

  it("given a client that disconnects, should finish the turn and store it", async () => {
    server.script.queue.push({ text: longReply });
    const controller = new AbortController();
    const response = await call(server, "/chats/gone/turns", {
      ...postJson({ seq: 0, text: "Go on" }),
      signal: controller.signal,
    });
    await readTurn(response, { stopAfter: 3, controller });
    const page = await until(
      () => chat(server, "gone"),
      (value) => !value.running && value.snapshot.messages.length === 2,
    );
    const answer = page.snapshot.messages[1];
    expect(answer?.parts).toEqual([{ type: "text", text: longReply }]);
  });

  it("POST /abort should end the running turn with turn-end and close the provider's connection within a second", async () => {
    server.script.queue.push({ text: longReply.repeat(4) });
    const closedBefore = server.providerClosedEarly();
    const response = await call(server, "/chats/stop/turns", postJson({ seq: 0, text: "Talk for long" }));
    const reading = readTurn(response);
    await until(
      () => chat(server, "stop"),
      (value) => value.running,
    );
    const started = Date.now();
    const abort = await call(server, "/chats/stop/abort", { method: "POST" });
    expect(JSON.parse(await text(abort))).toEqual({ aborted: true });
    const received = await reading;
    expect(received.at(-1)?.event).toMatchObject({ type: "turn-end", status: "aborted" });
    await until(
      async () => server.providerClosedEarly(),
      (count) => count > closedBefore,
    );
    // Generous on a loaded machine; the point is that it does not wait for the answer to finish.
    expect(Date.now() - started).toBeLessThan(5_000);
    const again = await call(server, "/chats/stop/abort", { method: "POST" });
    expect(JSON.parse(await text(again))).toEqual({ aborted: false });
  });

  it("POST /compact and GET /usage should fold on request and tell the window's use", async () => {
    for (const [seq, words] of [
      [0, "First question about the plan"],
      [2, "Second question about the budget"],
      [4, "Third question"],
    ] as const) {
      server.script.queue.push({ text: `Answer to: ${words}` });
      await readTurn(await call(server, "/chats/fold/turns", postJson({ seq, text: words })));
    }
    const usage = JSON.parse(await text(await call(server, "/chats/fold/usage")));
    expect(usage.window).toBe(64_000);
    expect(usage.usedTokens).toBeGreaterThan(0);
    const compact = JSON.parse(await text(await call(server, "/chats/fold/compact", postJson({ keep: "the budget" }))));
    expect(compact.result.status).toBe("compacted");
    expect(compact.result.summary.firstKeptSeq).toBe(4);
    expect(compact.events.map((event: EngineEvent) => event.type)).toEqual(["compacting", "compacting", "compacted"]);
    expect((await chat(server, "fold")).snapshot.summary?.firstKeptSeq).toBe(4);
    expect((await problemOf(await call(server, "/chats/fold/compact", postJson({ keep: 5 })))).status).toBe(400);
  });
});

describe("per-person limits", () => {
  let server: EngineServer;
  beforeAll(async () => {
    server = await startEngineServer({ handler: { limits: { turnsPerMinute: 2 } } });
  });
  afterAll(() => server?.close());

  it("over the turns a minute, should answer 429 with Retry-After and send nothing to the provider", async () => {
    for (const seq of [0, 2]) {
      server.script.queue.push({ text: "Fine." });
      await readTurn(await call(server, "/chats/limited/turns", postJson({ seq, text: "Hi" })));
    }
    const requests = server.fake.chatRequests().length;
    const refused = await call(server, "/chats/limited/turns", postJson({ seq: 4, text: "One more" }));
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const problem = await problemOf(refused);
    expect(problem.retryAfter).toBe(retryAfter);
    expect(server.fake.chatRequests().length).toBe(requests);
    // Another person has their own count.
    server.script.queue.push({ text: "Fine." });
    const bobs = await readTurn(await call(server, "/chats/limited/turns", postJson({ seq: 0, text: "Hi" }, "bob")));
    expect(bobs.at(-1)?.event).toMatchObject({ type: "turn-end", status: "done" });
  });
});

describe("unexpected errors", () => {
  const reported: Array<[unknown, unknown]> = [];
  const broken = new TypeError("the engine could not be made");
  let server: EngineServer;
  beforeAll(async () => {
    server = await startEngineServer({
      handler: {
        engineFor: () => {
          throw broken;
        },
        onError: (error, context) => reported.push([error, context]),
      },
    });
  });
  afterAll(() => server?.close());

  it("should answer a bare 500 and tell onError, as a request's", async () => {
    const response = await call(server, "/chats/broken");
    expect(response.status).toBe(500);
    const problem = await problemOf(response);
    expect(problem.type).toBe("urn:conch:problem:server-error");
    expect(JSON.stringify(problem)).not.toContain(broken.message);
    expect(reported).toEqual([[broken, { during: "request" }]]);
  });
});
