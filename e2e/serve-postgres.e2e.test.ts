// Two `pnpm serve` processes on one real Postgres (DATABASE_URL; a throwaway cluster of scripts/ensure-postgres.mjs
// unless one is given): turns on one chat from both at once, folds, an instance killed mid-answer, a restart.
import { randomBytes } from "node:crypto";
import type { ChatMessage, EngineEvent } from "@conch/engine-client";
import { createPostgresChatStore, migrate } from "@conch/engine-client/postgres";
import type { WireChatList, WireChatPage, WireProblem } from "@conch/engine-client/remote";
import { loadConversations, recordedTurns } from "@conch/fake-provider";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoFakeProvider, recordedConversation, startDemoFakeProvider } from "../dev/api/fake-provider.js";
import { conversationsDir } from "../dev/transcript-plugin.js";
import { type StartedPostgres, startPostgres } from "../scripts/ensure-postgres.mjs";
import { repoRoot } from "./helpers.js";
import { type ServeProcess, serveRefusal, startServe } from "./serve-helpers.js";

const api = "/api/engine";
/** The lease the instances hold a chat with: a dead one's chats are free this long after its last renewal. */
const leaseMs = 3000;

interface SseMessage {
  readonly id: string | undefined;
  readonly event: EngineEvent;
}

/** The events of a `text/event-stream` body, until it ends or `stop` says so. */
async function* events(response: Response): AsyncGenerator<SseMessage> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let end = buffer.indexOf("\n\n");
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split("\n");
        const id = lines
          .find((line) => line.startsWith("id:"))
          ?.slice(3)
          .trim();
        const data = lines
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data !== "") yield { id, event: JSON.parse(data) as EngineEvent };
        end = buffer.indexOf("\n\n");
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

const textOf = (message: ChatMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");

interface TurnResult {
  readonly text: string;
  readonly events: EngineEvent[];
}

/** One turn as a client sends it: after a 409 it takes the chat's next seq when told, else waits a little. */
async function sendTurn(serve: ServeProcess, chatId: string, text: string, deadline = 240_000): Promise<TurnResult> {
  let seq = 0;
  const started = Date.now();
  while (Date.now() - started < deadline) {
    const response = await fetch(`${serve.url}${api}/chats/${chatId}/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ seq, text }),
    });
    if (response.status === 409) {
      const problem = (await response.json()) as WireProblem;
      if (typeof problem.nextSeq === "number" && problem.nextSeq !== seq) seq = problem.nextSeq;
      else await new Promise((resolve) => setTimeout(resolve, 30 + Math.random() * 120));
      continue;
    }
    expect(response.status, await response.clone().text()).toBe(200);
    const received: EngineEvent[] = [];
    for await (const { event } of events(response)) {
      received.push(event);
      if (event.type === "turn-end") break;
    }
    return { text, events: received };
  }
  throw new Error(`the turn "${text}" never got in`);
}

async function chatPage(serve: ServeProcess, chatId: string): Promise<WireChatPage> {
  const response = await fetch(`${serve.url}${api}/chats/${chatId}?limit=500`);
  expect(response.status).toBe(200);
  return (await response.json()) as WireChatPage;
}

/** A person's message long enough that 40 of them overflow Chat 8K (so the chat folds), naming its turn first. */
function question(turn: number): string {
  const filler = Array.from({ length: 120 }, (_, word) => `w${turn}x${word}`).join(" ");
  return `Turn ${turn} of the shared chat. ${filler}`;
}

describe("two pnpm serve processes on one Postgres", () => {
  let postgres: StartedPostgres;
  let admin: pg.Client;
  const databases: string[] = [];
  let databaseUrl: string;
  let reader: pg.Pool;
  let fake: DemoFakeProvider;
  let a: ServeProcess;
  let b: ServeProcess;
  const serves: ServeProcess[] = [];
  let env: Record<string, string>;

  async function newDatabase(): Promise<string> {
    const name = `conch_e2e_${randomBytes(6).toString("hex")}`;
    await admin.query(`create database ${name}`);
    databases.push(name);
    const url = new URL(postgres.url);
    url.pathname = `/${name}`;
    return url.toString();
  }

  async function start(args: string[] = ["--no-build"], extra: Record<string, string> = {}) {
    const serve = await startServe({ ...env, ...extra }, args);
    serves.push(serve);
    return serve;
  }

  beforeAll(async () => {
    postgres = await startPostgres();
    admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    databaseUrl = await newDatabase();
    reader = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    fake = await startDemoFakeProvider({
      dialect: "openrouter",
      conversations: loadConversations(conversationsDir(repoRoot)),
      chunkDelayMs: 20,
    });
    env = {
      NACRE_PROVIDER: "openrouter",
      NACRE_BASE_URL: fake.server.baseURL,
      NACRE_MODEL: "chat-8k",
      NACRE_CHEAP_MODEL: "cheap",
      DATABASE_URL: databaseUrl,
      NACRE_LEASE_MS: String(leaseMs),
    };
    // The first builds the page; the second serves that build. Both migrate: the first from empty, the second
    // finds it done.
    a = await start([]);
    b = await start();
  }, 600_000);

  afterAll(async () => {
    await Promise.all(serves.map((serve) => serve.stop()));
    await reader?.end();
    await fake?.server.close();
    for (const name of databases) await admin.query(`drop database if exists ${name} with (force)`);
    await admin?.end();
    await postgres?.stop();
  });

  it("should migrate an empty database on the first start and find it done on the second", () => {
    expect(a.output()).toContain("migrated the chat schema from version 0 to");
    expect(b.output()).not.toContain("migrated the chat schema");
    expect(a.output()).toContain("chats in Postgres at");
    expect(a.output()).not.toContain(new URL(postgres.url).password || "no password");
  });

  it("should store 40 turns sent to one chat through both at once once each, in order, and fold it the same for both", async () => {
    const shared = Array.from({ length: 40 }, (_, turn) => sendTurn(turn % 2 === 0 ? a : b, "shared", question(turn)));
    // Other chats at the same time on both: a lock per chat, never one for all.
    const others = ["x", "y"].flatMap((name) =>
      Array.from({ length: 3 }, (_, turn) =>
        sendTurn(turn % 2 === 0 ? b : a, `other-${name}`, `Other ${name} ${turn}.`),
      ),
    );
    const results = await Promise.all([...shared, ...others]);
    expect(results.map((result) => result.events.at(-1))).toEqual(
      results.map(() => expect.objectContaining({ type: "turn-end", status: "done" })),
    );

    const store = createPostgresChatStore({ db: reader, userId: "local" });
    const log = await store.readLog("shared");
    expect(log.map((message) => message.seq)).toEqual(Array.from({ length: 80 }, (_, seq) => seq));
    expect(log.map((message) => message.role)).toEqual(log.map((_, seq) => (seq % 2 === 0 ? "user" : "assistant")));
    const asked = log.filter((message) => message.role === "user").map(textOf);
    expect(asked.toSorted()).toEqual(Array.from({ length: 40 }, (_, turn) => question(turn)).toSorted());
    // The fake model reads the person's first sentence back: every answer follows its own question.
    for (let seq = 0; seq < 80; seq += 2) {
      const sentence = /^Turn \d+ of the shared chat\./.exec(textOf(log[seq]))?.[0] as string;
      expect(textOf(log[seq + 1])).toContain(`“${sentence}”`);
    }
    for (const chatId of ["other-x", "other-y"]) {
      expect((await store.readLog(chatId)).map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    }
    // Folded, and the summary is the same read through either instance.
    const [fromA, fromB] = [await chatPage(a, "shared"), await chatPage(b, "shared")];
    expect(fromA.snapshot.summary).not.toBeNull();
    expect(fromB.snapshot.summary).toEqual(fromA.snapshot.summary);
    expect(fromB.snapshot.messages).toEqual(fromA.snapshot.messages);
  }, 600_000);

  it("should let the other instance go on with a chat within 30 s of one killed mid-answer, no seq broken", async () => {
    const conversation = loadConversations(conversationsDir(repoRoot)).find(
      (candidate) => candidate.id === recordedConversation.id,
    );
    // The recorded question with the longest answer: it streams for a few seconds.
    const longest = recordedTurns(conversation?.messages ?? [])
      .filter((turn) => turn.person.trim() !== "")
      .toSorted(
        (x, y) =>
          y.rounds.reduce((sum, round) => sum + round.reply.length, 0) -
          x.rounds.reduce((sum, round) => sum + round.reply.length, 0),
      )[0];
    expect(longest).toBeDefined();
    const response = await fetch(`${b.url}${api}/chats/killed/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ seq: 0, text: longest?.person }),
    });
    expect(response.status).toBe(200);
    let deltas = 0;
    for await (const { event } of events(response)) {
      if (event.type === "text-delta") deltas++;
      expect(event.type).not.toBe("turn-end");
      if (deltas >= 3) break;
    }
    await b.kill();
    const killedAt = Date.now();

    const next = await sendTurn(a, "killed", "Are you still there?", 30_000);
    const tookMs = Date.now() - killedAt;
    expect(next.events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
    expect(tookMs).toBeLessThan(30_000);

    const log = await createPostgresChatStore({ db: reader, userId: "local" }).readLog("killed");
    expect(log.map((message) => message.seq)).toEqual(log.map((_, seq) => seq));
    expect(textOf(log[0])).toBe(longest?.person);
    // The half-written answer: absent, or kept as an answer cut short; never in the middle of the new turn.
    const tail = log.slice(-2);
    expect(tail.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(textOf(tail[0])).toBe("Are you still there?");
    expect(textOf(tail[1])).toContain("“Are you still there?”");
    expect(log.length === 3 || log.length === 4).toBe(true);
    console.info(`[serve-postgres] the chat went on through the other instance ${tookMs} ms after the kill`);
  }, 120_000);

  it("should find every chat as it was after an instance restarts on the same database", async () => {
    const restarted = await start();
    const list = (await (await fetch(`${restarted.url}${api}/chats`)).json()) as WireChatList;
    expect(list.chats.map((chat) => chat.id).toSorted()).toEqual(["killed", "other-x", "other-y", "shared"]);
    // Both instances read the same chats. A fold ahead of the need may still be writing "shared"'s transcript from
    // the last turn, so the two views are compared until that write has landed.
    const views = async (server: ServeProcess) => ({
      list: (await (await fetch(`${server.url}${api}/chats`)).json()) as WireChatList,
      page: (await chatPage(server, "shared")).snapshot,
    });
    await expect
      .poll(
        async () => {
          const [first, second] = await Promise.all([views(a), views(restarted)]);
          return JSON.stringify(first) === JSON.stringify(second);
        },
        { timeout: 60_000 },
      )
      .toBe(true);
    const after = await views(restarted);
    expect(after.page.messages.length).toBeGreaterThan(0);
    expect(after.page.summary).not.toBeNull();
  }, 180_000);

  it("should refuse a database at a newer schema version, saying so, and change nothing", async () => {
    const newer = await newDatabase();
    const pool = new pg.Pool({ connectionString: newer, max: 1 });
    try {
      await migrate(pool);
      await pool.query("update conch_schema set version = 99");
      const refused = await serveRefusal({ ...env, DATABASE_URL: newer }, ["--no-build", "--port", "0"]);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain("schema is at version 99, newer than");
      const { rows } = await pool.query("select version from conch_schema");
      expect(rows).toEqual([{ version: 99 }]);
    } finally {
      await pool.end();
    }
  }, 120_000);
});
