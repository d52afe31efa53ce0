import { createReplayScript, type FakeProvider, startFakeProvider, tooLongBodyFor } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { createAnswer } from "../kit/answer.js";
import type { Turn } from "../kit/turn-runner.js";
import { emptyUsage } from "../messages.js";
import { chatLogFrom } from "../mock/long-chat.js";
import { createProvider } from "../providers/create-provider.js";
import type { TooLongRefusal } from "../providers/recognise-too-long.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { type ChatCache, createChatCache } from "./chat-loading.js";
import { type ChatRuntime, emptyChatRuntime } from "./chat-state.js";
import { createEngineParts, type EngineParts } from "./engine-parts.js";
import { type FoldContext, planAndFold } from "./fold-step.js";
import { believableRefusal, healAfterRefusal } from "./heal.js";
import { buildTurnRequest } from "./request.js";
import { planFor, sizeRequest } from "./sizing.js";
import { streamAnswer, type TurnTally } from "./stream-answer.js";

// The steps of a turn, each on its own over the fake provider (real HTTP): streaming an attempt, the
// fold-and-summary decision, healing, and the window evidence that heal and sizing consult.

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function setup(window = 32_000) {
  const script = createReplayScript(["cheap"]);
  const server = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: [
      { id: "chat", window },
      { id: "cheap", window: 128_000 },
    ],
    reply: script.reply,
  });
  servers.push(server);
  const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
  const parts: EngineParts = createEngineParts({ provider, model: "chat", store: createMemoryChatStore() });
  const chats: ChatCache = createChatCache(parts);
  const folds: FoldContext = { parts, chats, queued: (_chatId, work) => work() };
  return { server, provider, parts, folds, script };
}

function turnOf(rt: ChatRuntime, seq: number, events: EngineEvent[]): Turn {
  return { input: { chatId: rt.chatId, seq, text: "Go on" }, chatId: rt.chatId, send: (event) => events.push(event) };
}

function chatWith(turns: number): ChatRuntime {
  const rt = emptyChatRuntime("c");
  rt.log = chatLogFrom(
    Array.from({ length: turns }, (_, index) => [
      `Question ${index}: ${"tell me more ".repeat(60)}`,
      `Answer ${index}`,
    ]),
  );
  rt.log.push({ seq: rt.log.length, role: "user", parts: [{ type: "text", text: "Go on" }], createdAt: 1 });
  return rt;
}

async function attempt(setupDone: Awaited<ReturnType<typeof setup>>, rt: ChatRuntime, events: EngineEvent[]) {
  const { parts } = setupDone;
  const size = await sizeRequest(parts, rt);
  const planned = planFor(rt, size, "auto");
  const turn = turnOf(rt, rt.log.length - 1, events);
  const tally: TurnTally = { usage: emptyUsage, kept: planned.kept };
  const request = buildTurnRequest({}, size, planned, rt.summary, undefined, rt.cache);
  const answer = createAnswer(turn, "chat");
  return {
    outcome: await streamAnswer({ parts, turn, rt, answer, tally, size, request }),
    answer,
    tally,
    size,
    request,
    turn,
  };
}

describe("streamAnswer", () => {
  it("should write the reply into the answer, the usage into the tally, and raise the factor", async () => {
    const fake = await setup();
    fake.script.queue.push({ text: "Streamed back." });
    const rt = chatWith(2);
    const events: EngineEvent[] = [];
    const { outcome, answer, tally } = await attempt(fake, rt, events);
    expect(outcome).toEqual({ type: "answered", finish: "stop" });
    expect(answer.parts).toEqual([{ type: "text", text: "Streamed back." }]);
    expect(tally.usage.inputTokens).toBeGreaterThan(0);
    expect(rt.factor?.modelId).toBe("chat");
    expect(events.map((event) => event.type)).toContain("usage");
  });

  it("should return a refusal before any word as healable, with what it named", async () => {
    const fake = await setup();
    fake.server.refuseNext(1, tooLongBodyFor("openai", { window: 16_000, inputTokens: 20_000, outputTokens: 0 }) ?? 0);
    const { outcome, answer } = await attempt(fake, chatWith(2), []);
    expect(outcome.type).toBe("refused");
    expect(outcome.type === "refused" && outcome.refusal.window).toBe(16_000);
    expect(answer.started).toBe(false);
  });

  it("should return any other provider failure as the turn's problem", async () => {
    const fake = await setup();
    fake.server.failNext(1, "http-500");
    const { outcome } = await attempt(fake, chatWith(1), []);
    expect(outcome.type).toBe("failed");
    expect(outcome.type === "failed" && outcome.problem.kind).toBe("provider-error");
  });
});

describe("planAndFold", () => {
  it("should keep the plan's state and fold nothing while the chat fits", async () => {
    const { parts, folds } = await setup();
    const rt = chatWith(2);
    const events: EngineEvent[] = [];
    const { planned, usage } = await planAndFold(folds, rt, await sizeRequest(parts, rt), "auto", undefined, (event) =>
      events.push(event),
    );
    expect(planned.fold).toBe(false);
    expect(usage).toEqual(emptyUsage);
    expect(events).toEqual([]);
    expect(rt.summary).toBeNull();
  });

  it("should fold the front into a summary written by the cheapest model when the chat is over its budget", async () => {
    const { parts, folds } = await setup(8_000);
    const rt = chatWith(30);
    const events: EngineEvent[] = [];
    const { planned, usage } = await planAndFold(folds, rt, await sizeRequest(parts, rt), "auto", undefined, (event) =>
      events.push(event),
    );
    expect(planned.fold).toBe(true);
    expect(events.map((event) => event.type)).toEqual(["compacting", "compacting", "compacted"]);
    expect(events[1]).toMatchObject({ type: "compacting", piece: 1, pieces: 1 });
    expect(rt.summary).toMatchObject({ model: "cheap", reason: "budget", firstKeptSeq: planned.firstKeptSeq });
    expect(rt.fold.firstKeptSeq).toBe(planned.firstKeptSeq);
    expect(usage.inputTokens).toBeGreaterThan(0);
    // The transcript was saved with the kept messages.
    expect((await parts.store.readTranscript("c"))?.summary?.firstKeptSeq).toBe(planned.firstKeptSeq);
  });
});

describe("healAfterRefusal", () => {
  /** One attempt at the chat, then the heal of `refusal` as if that attempt had been refused so. */
  async function heal(rt: ChatRuntime, refusal: TooLongRefusal) {
    const fake = await setup();
    const { size, request, turn } = await attempt(fake, rt, []);
    return healAfterRefusal(fake.folds, { turn, rt, size, request, refusal });
  }

  it("should lower the answer room when the output reservation was refused and the window was right", async () => {
    const rt = chatWith(2);
    const healed = await heal(rt, { cause: "output", window: 32_000, inputTokens: 31_000 });
    // Half the answer room, or what the window leaves after the prompt (less a margin), whichever is smaller.
    expect(rt.answerRooms.chat).toBe(32_000 - 31_000 - 64);
    expect(healed.size.budget.answerRoom).toBe(936);
    expect(healed.size.budget.window).toBe(32_000);
  });

  it("should size with a smaller window the refusal named, and fold for it", async () => {
    const rt = chatWith(30);
    const healed = await heal(rt, { cause: "input", window: 8_000 });
    expect(healed.size.budget.window).toBe(8_000);
    expect(healed.planned.fold).toBe(true);
    expect(rt.summary?.reason).toBe("too-long");
  });
});

describe("believableRefusal and the window evidence", () => {
  it("should drop a refusal's numbers once the model served more than the window it names, never before", async () => {
    const { parts, provider } = await setup();
    const refusal = { cause: "input" as const, window: 512, inputTokens: 900 };
    expect(believableRefusal(parts, "chat", refusal)).toEqual(refusal);
    expect(parts.windowEvidence.served("chat", 20_000)).toBeUndefined();
    expect(believableRefusal(parts, "chat", refusal)).toEqual({ cause: "input" });
    // Another model's successes say nothing of this one's window.
    expect(believableRefusal(parts, "other", refusal)).toEqual(refusal);
    // A remembered window below a success is raised to what the success served.
    provider.windows.remember("openrouter", "chat", 4_096);
    expect(parts.windowEvidence.served("chat", 6_000)).toBe(6_000);
    expect(provider.windows.get("openrouter", "chat")).toBe(6_000);
    // Still below the 20,000 served before: doubtful for sizing, while a window at least that large is not.
    expect(parts.windowEvidence.believable("chat", 6_000)).toBeUndefined();
    expect(parts.windowEvidence.believable("chat", 20_000)).toBe(20_000);
  });
});
