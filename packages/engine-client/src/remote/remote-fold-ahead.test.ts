import { afterEach, describe, expect, it } from "vitest";
import { createApiEngine } from "../api-engine/api-engine.js";
import type { EngineEvent } from "../events.js";
import { longTurnText, startHeldSummariser } from "../server/testing/held-summariser.js";
import { servedAuth, serveEngine } from "../server/testing/serve-engine.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { createRemoteEngine } from "./remote-engine.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/**
 * The API engine over the fake provider, its summariser held at a gate the test opens, served on 127.0.0.1; a
 * remote engine on it whose `fetch` counts the `GET …/events?until=idle` connections still open.
 */
async function setup() {
  const held = await startHeldSummariser({ held: true });
  closers.push(() => held.server.close());
  const state = { following: 0, follows: 0 };
  const engine = createApiEngine({
    provider: held.provider(),
    model: "chat",
    store: createMemoryChatStore(),
    systemPrompt: "You are a helpful assistant.",
  });
  const served = await serveEngine(engine);
  closers.push(() => served.close());
  const countingFetch: typeof fetch = async (input, init) => {
    const following = String(input).includes("/events?until=idle");
    if (following) state.follows += 1;
    const response = await fetch(input, init);
    if (!following || !response.body) return response;
    state.following += 1;
    let open = true;
    const closed = () => {
      if (open) state.following -= 1;
      open = false;
    };
    init?.signal?.addEventListener("abort", closed, { once: true });
    const body = response.body.pipeThrough(new TransformStream({ flush: closed }));
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const remote = await createRemoteEngine({ baseURL: served.baseURL, headers: servedAuth, fetch: countingFetch });
  const heard: EngineEvent[] = [];
  return { remote, state, heard, openGate: held.openGate, summaries: () => held.state.summaries };
}

async function turn(remote: Awaited<ReturnType<typeof setup>>["remote"], seq: number) {
  const events: EngineEvent[] = [];
  for await (const event of remote.sendTurn({ chatId: "c", seq, text: `${seq} ${longTurnText}` })) events.push(event);
  expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
  return events;
}

const types = (events: readonly EngineEvent[]) => events.map((event) => event.type);

describe("the remote engine and a fold ahead of the need", () => {
  it("should hand a fold ahead that follows its turn to subscribe listeners live, with no further turn, then let go", async () => {
    const { remote, state, heard, openGate, summaries } = await setup();
    remote.subscribe((event) => heard.push(event));
    await turn(remote, 0);
    // No fold follows the first turn: the server ends the follow at once.
    await expect.poll(() => state.follows, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => state.following, { timeout: 10_000 }).toBe(0);
    expect(types(heard)).not.toContain("compacting");

    await turn(remote, 2);
    // The fold begins after the turn, in the background: its start is heard while the summariser works.
    await expect.poll(() => types(heard).includes("compacting"), { timeout: 10_000 }).toBe(true);
    await expect.poll(summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(types(heard)).not.toContain("compacted");
    openGate();
    await expect.poll(() => types(heard).includes("compacted"), { timeout: 20_000 }).toBe(true);
    // In order, once each, after the turn's end, and no turn since.
    const heardTypes = types(heard);
    expect(heardTypes.lastIndexOf("turn-end")).toBeLessThan(heardTypes.indexOf("compacting"));
    expect(heardTypes.filter((type) => type === "compacted")).toHaveLength(1);
    expect(heardTypes.filter((type) => type === "turn-start")).toHaveLength(2);
    // The server ends the follow once the fold has ended: no connection is held for the chat.
    await expect.poll(() => state.following, { timeout: 10_000 }).toBe(0);
    expect(state.follows).toBe(2);
    const cut = (await remote.loadChat("c")).summary?.firstKeptSeq;
    expect(cut).toBeGreaterThan(0);
    // Over the wire too, the fold said from its start where it would cut.
    expect(heard.find((event) => event.type === "compacting")).toMatchObject({ firstKeptSeq: cut });
  });

  it("should hold no connection for a chat nobody listens to, and let go when the last listener does", async () => {
    const { remote, state, heard, openGate, summaries } = await setup();
    await turn(remote, 0);
    await turn(remote, 2);
    await expect.poll(summaries, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(state.follows).toBe(0);
    openGate();

    const unsubscribe = remote.subscribe((event) => heard.push(event));
    await turn(remote, 4);
    // This engine's next turn of the chat ends the follow after the one before (its stream carries any fold).
    await turn(remote, 6);
    await expect.poll(() => state.follows, { timeout: 10_000 }).toBe(2);
    unsubscribe();
    await expect.poll(() => state.following, { timeout: 10_000 }).toBe(0);
  });
});
