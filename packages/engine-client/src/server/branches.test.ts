import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../engine.js";
import type { EngineEvent } from "../events.js";
import { readEventStream } from "../protocol/event-stream.js";
import type { WireCapabilities, WireChatPage, WireProblem } from "../protocol/wire.js";
import { createBranchingEngine } from "./testing/branching-engine.js";
import { servedAuth, serveEngine } from "./testing/serve-engine.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** The handler over `engine` on loopback (real HTTP); its base URL. */
async function serve(engine: Engine): Promise<string> {
  const served = await serveEngine(engine);
  closers.push(served.close);
  return served.baseURL;
}

const auth = servedAuth;

function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Sends a turn and reads its stream to the end: its events. */
async function turn(base: string, body: unknown): Promise<EngineEvent[]> {
  const response = await post(base, "/chats/c/turns", body);
  expect(response.status).toBe(200);
  const events: EngineEvent[] = [];
  for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
    events.push(JSON.parse(message.data) as EngineEvent);
  }
  expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
  return events;
}

async function page(base: string, query = ""): Promise<WireChatPage> {
  const response = await fetch(`${base}/chats/c${query}`, { headers: auth });
  expect(response.status).toBe(200);
  return (await response.json()) as WireChatPage;
}

async function problem(response: Response, status: number, type: string): Promise<WireProblem> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as WireProblem;
  expect(body.type).toBe(`urn:conch:problem:${type}`);
  return body;
}

/** The branch as `[seq, text, siblings]` rows. */
const rows = (chat: WireChatPage) =>
  chat.snapshot.messages.map((message) => [
    message.seq,
    message.parts[0]?.type === "text" ? message.parts[0].text : "",
    message.siblings,
  ]);

/** Two turns: `one` (0, 1) and `two` (2, 3). */
async function twoTurns(base: string): Promise<void> {
  await turn(base, { seq: 0, text: "one" });
  await turn(base, { seq: 2, text: "two" });
}

describe("branches over the wire", () => {
  describe("given an engine with the branches capability", () => {
    it("should say so in GET /capabilities", async () => {
      const base = await serve(createBranchingEngine());
      const capabilities = (await (await fetch(`${base}/capabilities`, { headers: auth })).json()) as WireCapabilities;
      expect(capabilities.branches).toBe(true);
    });

    it("should edit the 2nd person message, regenerate its answer and select the first branch again, each whole", async () => {
      const base = await serve(createBranchingEngine());
      await twoTurns(base);

      // Edit: the log's next place, after the edited message's parent.
      const edited = await turn(base, { seq: 4, parent: 1, text: "two, edited" });
      expect(edited[0]).toMatchObject({ type: "turn-start", message: { seq: 4, parent: 1 } });
      expect(rows(await page(base))).toEqual([
        [0, "one", undefined],
        [1, "Answer to one", undefined],
        [4, "two, edited", [2, 4]],
        [5, "Answer to two, edited", undefined],
      ]);

      // Regenerate: the person's message again, without its text.
      await turn(base, { seq: 4, retry: true });
      const regenerated = await page(base);
      expect(rows(regenerated).slice(2)).toEqual([
        [4, "two, edited", [2, 4]],
        [6, "Answer to two, edited", [5, 6]],
      ]);
      expect(regenerated.snapshot).toMatchObject({ nextSeq: 7, activeLeaf: 6 });

      // The first branch again: whole, as it was.
      const selected = await post(base, "/chats/c/branch", { seq: 2 });
      expect(selected.status).toBe(200);
      const first = (await selected.json()) as WireChatPage;
      expect(rows(first)).toEqual([
        [0, "one", undefined],
        [1, "Answer to one", undefined],
        [2, "two", [2, 4]],
        [3, "Answer to two", undefined],
      ]);
      expect(first.snapshot).toMatchObject({ nextSeq: 7, activeLeaf: 3 });
      expect(first).toMatchObject({ hasOlder: false, running: false });
      expect(rows(await page(base))).toEqual(rows(first));

      // A turn without a parent continues the selected branch, at the log's next place.
      await turn(base, { seq: 7, text: "three" });
      expect(rows(await page(base)).map(([seq]) => seq)).toEqual([0, 1, 2, 3, 7, 8]);
      // The edited branch, through any of its messages: its newest leaf.
      const back = (await (await post(base, "/chats/c/branch", { seq: 4 })).json()) as WireChatPage;
      expect(rows(back).map(([seq]) => seq)).toEqual([0, 1, 4, 6]);
    });

    it("should page the active branch from its leaf", async () => {
      const base = await serve(createBranchingEngine());
      await twoTurns(base);
      await turn(base, { seq: 4, parent: 1, text: "two, edited" });
      const newest = await page(base, "?limit=3");
      expect(rows(newest).map(([seq]) => seq)).toEqual([1, 4, 5]);
      expect(newest.hasOlder).toBe(true);
      const older = await page(base, "?before=1&limit=3");
      expect(rows(older).map(([seq]) => seq)).toEqual([0]);
      expect(older.hasOlder).toBe(false);
      const selected = await post(base, "/chats/c/branch?limit=2", { seq: 0 });
      expect(rows((await selected.json()) as WireChatPage).map(([seq]) => seq)).toEqual([4, 5]);
    });

    it("should refuse a stale parent as a stale seq (409 with nextSeq), writing nothing", async () => {
      const engine = createBranchingEngine();
      const base = await serve(engine);
      await twoTurns(base);
      const refused = await problem(
        await post(base, "/chats/c/turns", { seq: 4, parent: 9, text: "x" }),
        409,
        "stale-seq",
      );
      expect(refused.nextSeq).toBe(4);
      await problem(await post(base, "/chats/c/turns", { seq: 3, parent: 1, text: "x" }), 409, "stale-seq");
      expect(engine.log("c")).toHaveLength(4);
    });

    it("should refuse a turn without text unless it is a retry (400 invalid-body)", async () => {
      const base = await serve(createBranchingEngine());
      const refused = await problem(await post(base, "/chats/c/turns", { seq: 0 }), 400, "invalid-body");
      expect(refused.issues?.[0]?.path).toBe("text");
    });

    it("should answer a branch switch to an unknown seq 404 with the log's next seq, and a bad body 400", async () => {
      const base = await serve(createBranchingEngine());
      await twoTurns(base);
      const unknown = await problem(await post(base, "/chats/c/branch", { seq: 4 }), 404, "not-found");
      expect(unknown.nextSeq).toBe(4);
      await problem(await post(base, "/chats/c/branch", { seq: -1 }), 400, "invalid-body");
      await problem(await post(base, "/chats/c/branch", { seq: 1, leaf: 1 }), 400, "invalid-body");
      const get = await fetch(`${base}/chats/c/branch`, { headers: auth });
      await problem(get, 405, "method-not-allowed");
    });

    it("should refuse a branch switch while a turn runs (409 busy), and take it once the turn has ended", async () => {
      let answer: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        answer = resolve;
      });
      const base = await serve(createBranchingEngine({ beforeAnswer: () => held }));
      const running = await post(base, "/chats/c/turns", { seq: 0, text: "one" });
      expect(running.status).toBe(200);
      await problem(await post(base, "/chats/c/branch", { seq: 0 }), 409, "busy");
      answer();
      for await (const _message of readEventStream(running.body as ReadableStream<Uint8Array>)) {
        // Read to the turn's end: the chat is free after it.
      }
      expect((await post(base, "/chats/c/branch", { seq: 0 })).status).toBe(200);
    });
  });

  describe("given an engine without the branches capability", () => {
    it("should say so in GET /capabilities and answer a branch switch 404 no-branches", async () => {
      const engine = createBranchingEngine();
      const base = await serve({ ...engine, capabilities: {} });
      const capabilities = (await (await fetch(`${base}/capabilities`, { headers: auth })).json()) as WireCapabilities;
      expect(capabilities.branches).toBe(false);
      await problem(await post(base, "/chats/c/branch", { seq: 0 }), 404, "no-branches");
    });
  });
});
