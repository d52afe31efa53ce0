// A client written from docs/protocol.md alone: plain fetch and a hand-written SSE reader, against `pnpm serve`
// with two people's tokens. It imports nothing of the engine.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoFakeProvider, startDemoFakeProvider } from "../dev/api/fake-provider.js";
import { type ServeProcess, startServe } from "./serve-helpers.js";

interface SseEvent {
  id: string | undefined;
  data: string;
}

/** Reads `text/event-stream` by the spec: lines, `id:` and `data:` fields, a blank line ends an event. */
async function* sse(response: Response): AsyncGenerator<SseEvent> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let id: string | undefined;
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline = buffer.search(/\r\n|\n|\r/);
      while (newline !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield { id, data: data.join("\n") };
          data = [];
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon === -1 ? line : line.slice(0, colon);
          const fieldValue = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") id = fieldValue;
          if (field === "data") data.push(fieldValue);
        }
        newline = buffer.search(/\r\n|\n|\r/);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

type Json = Record<string, unknown>;

describe("an independent client of the wire protocol, against pnpm serve", () => {
  let fake: DemoFakeProvider;
  let serve: ServeProcess;
  const base = () => `${serve.url}/api/engine`;
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const post = (path: string, token: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${base()}${path}`, {
      method: "POST",
      headers: { ...auth(token), "content-type": "application/json" },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const get = async (path: string, token: string) =>
    (await fetch(`${base()}${path}`, { headers: auth(token) })).json() as Promise<Json>;

  async function readToEnd(response: Response, stopAfter?: number, controller?: AbortController) {
    const events: { id: string; event: Json }[] = [];
    for await (const message of sse(response)) {
      const event = JSON.parse(message.data) as Json;
      events.push({ id: message.id as string, event });
      if (event.type === "turn-end") break;
      if (stopAfter !== undefined && events.length >= stopAfter) {
        controller?.abort();
        break;
      }
    }
    return events;
  }
  const textOf = (events: { event: Json }[]) =>
    events.map(({ event }) => (event.type === "text-delta" ? (event.delta as string) : "")).join("");

  beforeAll(async () => {
    fake = await startDemoFakeProvider({
      dialect: "openrouter",
      apiKey: "sk-or-protocol-client-secret-key",
      chunkDelayMs: 25,
    });
    serve = await startServe({
      NACRE_PROVIDER: "openrouter",
      NACRE_BASE_URL: fake.server.baseURL,
      NACRE_API_KEY: "sk-or-protocol-client-secret-key",
      NACRE_MODEL: "chat-200k",
      NACRE_CHEAP_MODEL: "cheap",
      NACRE_SERVER_TOKENS: "alice:alice-token-1,bob:bob-token-22",
    });
  });
  afterAll(async () => {
    await serve?.stop();
    await fake?.server.close();
  });

  it("should need a token, and speak protocol 1", async () => {
    const anonymous = await fetch(`${base()}/capabilities`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("content-type")).toBe("application/problem+json");
    expect(((await anonymous.json()) as Json).type).toBe("urn:conch:problem:unauthorized");
    const capabilities = await get("/capabilities", "alice-token-1");
    expect(capabilities.protocol).toBe(1);
    expect(capabilities.context).toBe(true);
  });

  it("should keep each person's chat to them, refuse a stale seq, and answer bad input with problem+json", async () => {
    const first = await readToEnd(
      await post("/chats/mine/turns", "alice-token-1", { seq: 0, text: "Alice here, hello" }),
    );
    expect(first.at(-1)?.event.status).toBe("done");
    const bobs = (await get("/chats/mine", "bob-token-22")).snapshot as Json;
    expect(bobs.messages).toEqual([]);
    const stale = await post("/chats/mine/turns", "alice-token-1", { seq: 0, text: "again" });
    expect(stale.status).toBe(409);
    const problem = (await stale.json()) as Json;
    expect(problem.type).toBe("urn:conch:problem:stale-seq");
    expect(problem.nextSeq).toBe(2);
    const bad = await post("/chats/mine/turns", "alice-token-1", { seq: "two" });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toBe("application/problem+json");
    expect(((await bad.json()) as Json).type).toBe("urn:conch:problem:invalid-body");
  });

  it("should resume a dropped answer from Last-Event-ID with the full answer and no event twice", async () => {
    const controller = new AbortController();
    const words = "Please tell me about the seventh step of the plan, with its 3 files.";
    const before = await readToEnd(
      await post("/chats/resume/turns", "alice-token-1", { seq: 0, text: words }, controller.signal),
      5,
      controller,
    );
    const rest = await readToEnd(
      await fetch(`${base()}/chats/resume/events`, {
        headers: { ...auth("alice-token-1"), "last-event-id": before.at(-1)?.id as string },
      }),
    );
    const all = [...before, ...rest];
    expect(new Set(all.map(({ id }) => id)).size).toBe(all.length);
    expect(all.at(-1)?.event.status).toBe("done");
    const page = (await get("/chats/resume", "alice-token-1")).snapshot as {
      messages: { parts: { text: string }[] }[];
    };
    expect(textOf(all)).toBe(page.messages[1]?.parts[0]?.text);
  });

  it("should hear a fold ahead of the need after its turn on GET /events?until=idle, which ends once the chat is idle", async () => {
    const capabilities = await get("/capabilities", "alice-token-1");
    expect(capabilities.eventsUntilIdle).toBe(true);
    const words = Array.from({ length: 900 }, (_, index) => `word${index % 97}`).join(" ");
    /** What `until=idle` gives after the turn's last event: it ends by itself (the test would hang otherwise). */
    const afterTurn = async (lastId: string) => {
      const events: Json[] = [];
      const response = await fetch(`${base()}/chats/ahead/events?until=idle`, {
        headers: { ...auth("alice-token-1"), "last-event-id": lastId },
      });
      for await (const message of sse(response)) events.push(JSON.parse(message.data) as Json);
      return events;
    };
    // Long turns on the 8K model until one leaves the next turn due to fold: the fold comes after its turn-end.
    let heard: Json[] = [];
    for (let seq = 0; seq < 20 && heard.length === 0; seq += 2) {
      const turn = await readToEnd(
        await post("/chats/ahead/turns", "alice-token-1", { seq, text: `${seq} ${words}`, model: "chat-8k" }),
      );
      expect(turn.at(-1)?.event).toMatchObject({ type: "turn-end", status: "done" });
      heard = await afterTurn(turn.at(-1)?.id as string);
    }
    expect(heard.map((event) => event.type)).toContain("compacting");
    expect(heard.map((event) => event.type)).toContain("compacted");
    expect(heard.every((event) => event.type !== "turn-start")).toBe(true);
    const page = (await get("/chats/ahead?model=chat-8k", "alice-token-1")).snapshot as { summary: Json | null };
    expect(page.summary).not.toBeNull();
  });

  it("should abort a running answer, and go on serving", async () => {
    const words = Array.from({ length: 400 }, (_, index) => `point ${index}`).join(", ");
    const response = await post("/chats/stop/turns", "bob-token-22", { seq: 0, text: words });
    const reading = readToEnd(response);
    for (;;) {
      const page = await get("/chats/stop", "bob-token-22");
      if (page.running) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const aborted = (await (await post("/chats/stop/abort", "bob-token-22", {})).json()) as Json;
    expect(aborted.aborted).toBe(true);
    const events = await reading;
    expect(events.at(-1)?.event.status).toBe("aborted");
    expect((await fetch(`${base()}/capabilities`, { headers: auth("bob-token-22") })).status).toBe(200);
    const next = await readToEnd(await post("/chats/after/turns", "bob-token-22", { seq: 0, text: "Still there?" }));
    expect(next.at(-1)?.event.status).toBe("done");
  });

  it("should edit the 2nd person message, regenerate the new answer and select the first branch again: each branch whole, nothing lost", async () => {
    interface Message {
      seq: number;
      role: string;
      parent?: number;
      siblings?: number[];
      parts: { type: string; text?: string }[];
    }
    interface Snapshot {
      messages: Message[];
      nextSeq: number;
      activeLeaf: number;
    }
    const token = "alice-token-1";
    const chat = async () => (await get("/chats/branches", token)).snapshot as Snapshot;
    const send = async (body: Json) => {
      const events = await readToEnd(await post("/chats/branches/turns", token, body));
      expect(events.at(-1)?.event.status).toBe("done");
    };
    /** A branch as seq, role and words: what the person reads. */
    const shown = (snapshot: Snapshot) =>
      snapshot.messages.map((message) => [
        message.seq,
        message.role,
        message.parts.map((part) => part.text ?? "").join(""),
      ]);
    expect((await get("/capabilities", token)).branches).toBe(true);

    await send({ seq: 0, text: "First question: what is the plan for Monday?" });
    await send({ seq: (await chat()).nextSeq, text: "Second question: and for Tuesday?" });
    const first = await chat();
    expect(first.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const second = first.messages[2] as Message;

    // Edit: the new text at the log's next place, after the edited message's parent.
    await send({
      seq: first.nextSeq,
      parent: second.parent ?? second.seq - 1,
      text: "Second question, edited: and for Wednesday?",
    });
    const edited = await chat();
    expect(shown(edited).slice(0, 2)).toEqual(shown(first).slice(0, 2));
    const editedQuestion = edited.messages[2] as Message;
    expect(editedQuestion.parts[0]?.text).toBe("Second question, edited: and for Wednesday?");
    expect(editedQuestion.siblings).toEqual([second.seq, editedQuestion.seq]);
    expect(edited.messages).toHaveLength(4);

    // Regenerate the new answer: the person's message again, without its text.
    await send({ seq: editedQuestion.seq, retry: true });
    const regenerated = await chat();
    expect(shown(regenerated).slice(0, 3)).toEqual(shown(edited).slice(0, 3));
    const oldAnswer = edited.messages[3] as Message;
    const newAnswer = regenerated.messages[3] as Message;
    expect(newAnswer.seq).toBeGreaterThan(oldAnswer.seq);
    expect(newAnswer.siblings).toEqual([oldAnswer.seq, newAnswer.seq]);
    expect(regenerated).toMatchObject({ nextSeq: newAnswer.seq + 1, activeLeaf: newAnswer.seq });

    // The first branch again: whole, word for word.
    const selected = await post("/chats/branches/branch", token, { seq: second.seq });
    expect(selected.status).toBe(200);
    const back = ((await selected.json()) as Json).snapshot as Snapshot;
    expect(shown(back)).toEqual(shown(first));
    expect(back.messages[2]?.siblings).toEqual([second.seq, editedQuestion.seq]);
    expect(shown(await chat())).toEqual(shown(first));

    // Nothing lost: the edited branch with its first answer, and with its regenerated one.
    const withOldAnswer = ((await (await post("/chats/branches/branch", token, { seq: oldAnswer.seq })).json()) as Json)
      .snapshot as Snapshot;
    expect(shown(withOldAnswer)).toEqual(shown(edited));
    const withNewAnswer = ((await (await post("/chats/branches/branch", token, { seq: newAnswer.seq })).json()) as Json)
      .snapshot as Snapshot;
    expect(shown(withNewAnswer)).toEqual(shown(regenerated));
    // A parent that is no message is refused as a stale seq, with where the next message goes; nothing written.
    const staleParent = await post("/chats/branches/turns", token, { seq: newAnswer.seq + 1, parent: 999, text: "x" });
    expect(staleParent.status).toBe(409);
    expect(await staleParent.json()).toMatchObject({
      type: "urn:conch:problem:stale-seq",
      nextSeq: newAnswer.seq + 1,
    });
    // A seq that is no message: 404, and the chat where it was.
    expect((await post("/chats/branches/branch", token, { seq: 999 })).status).toBe(404);
    expect(shown(await chat())).toEqual(shown(regenerated));
  });

  it("should list each person's chats alone, rename one with PATCH and delete one, none of another's", async () => {
    const patch = (path: string, token: string, body: unknown) =>
      fetch(`${base()}${path}`, {
        method: "PATCH",
        headers: { ...auth(token), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const listOf = async (token: string) =>
      ((await get("/chats?limit=200", token)).chats as { id: string; title: string; updated: number }[]).map(
        ({ id, title }) => [id, title],
      );
    const done = await readToEnd(
      await post("/chats/listed/turns", "alice-token-1", { seq: 0, text: "Listed chat\nwith a second line" }),
    );
    expect(done.at(-1)?.event.status).toBe("done");
    const alices = await listOf("alice-token-1");
    expect(alices[0]).toEqual(["listed", "Listed chat"]);
    expect(alices.map(([id]) => id)).not.toContain("stop");
    expect((await listOf("bob-token-22")).map(([id]) => id)).not.toContain("listed");

    const renamed = await patch("/chats/listed", "alice-token-1", { title: "  Trip plans " });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toEqual({ id: "listed", title: "Trip plans" });
    expect((await listOf("alice-token-1"))[0]).toEqual(["listed", "Trip plans"]);
    const notBobs = await patch("/chats/listed", "bob-token-22", { title: "Bob's now" });
    expect(notBobs.status).toBe(404);
    expect(notBobs.headers.get("content-type")).toBe("application/problem+json");
    const empty = await patch("/chats/listed", "alice-token-1", { title: "   " });
    expect(((await empty.json()) as Json).type).toBe("urn:conch:problem:invalid-body");

    expect((await fetch(`${base()}/chats/listed`, { method: "DELETE", headers: auth("bob-token-22") })).status).toBe(
      404,
    );
    expect((await fetch(`${base()}/chats/listed`, { method: "DELETE", headers: auth("alice-token-1") })).status).toBe(
      204,
    );
    expect((await listOf("alice-token-1")).map(([id]) => id)).not.toContain("listed");
  });
});
