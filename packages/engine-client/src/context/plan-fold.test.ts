import { loadConversations } from "@conch/fake-provider";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatMessage, MessagePart, MessageRole } from "../messages.js";
import { computeBudget } from "./budget.js";
import { type FoldInput, type FoldPlan, type FoldState, initialFoldState, planFold } from "./fold.js";
import { buildRequestMessages } from "./frame.js";
import { createEstimateCache, estimateMessageBytes, estimateMessagesTokens } from "./message-estimate.js";
import { isShortenablePart } from "./shorten.js";
import { splitTurns } from "./turns.js";

// 100 words of 350 estimated tokens per message (4 of overhead): every turn of `chat` below is 700 tokens.
const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index % 97}`).join(" ");
const hundredWords = words(100);

const message = (seq: number, role: MessageRole, parts: MessagePart[]): ChatMessage => ({ seq, role, parts });
const text = (value: string): MessagePart[] => [{ type: "text", text: value }];
/** `turns` turns of a 100-word question and a 100-word answer. */
const chat = (turns: number): ChatMessage[] =>
  Array.from({ length: turns * 2 }, (_, seq) => message(seq, seq % 2 === 0 ? "user" : "assistant", text(hundredWords)));
const seqs = (messages: readonly ChatMessage[]) => messages.map((value) => value.seq);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, index) => from + index);
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

const tinyTurns = Array.from({ length: 700 }, (_, seq) =>
  message(seq, seq % 2 === 0 ? "user" : "assistant", text("hi")),
);
const pictureTurns = Array.from({ length: 20 }, (_, seq) =>
  seq % 2 === 0
    ? message(seq, "user", [
        { type: "picture", name: `p${seq}.png`, mediaType: "image/png", data: "A".repeat(1 << 20) },
      ])
    : message(seq, "assistant", text("ok")),
);
const giantTurn = [
  message(0, "user", text(words(50))),
  message(1, "assistant", [{ type: "tool-call", id: "c1", name: "read", arguments: '{"path":"log.txt"}' }]),
  message(2, "tool", [{ type: "tool-result", callId: "c1", name: "read", text: words(20_000) }]),
  message(3, "assistant", text(words(20))),
];
const bigLastTurn = [
  ...chat(5),
  message(10, "user", text(hundredWords)),
  message(11, "tool", [{ type: "tool-result", callId: "c9", text: words(3_000) }]),
];

interface Expected {
  readonly fold: boolean;
  readonly reason: FoldPlan["reason"];
  readonly folded: number[];
  readonly kept: number[];
  readonly shortened: number[];
  readonly fits: boolean;
  /** The most tokens the plan may send. */
  readonly atMost?: number;
}

describe("planFold", () => {
  describe("given a chat, a budget and a mode", () => {
    it.each([
      {
        name: "an empty chat",
        input: { messages: [], budget: 1_000 },
        expected: { fold: false, reason: null, folded: [], kept: [], shortened: [], fits: true },
      },
      {
        name: "an empty chat on /compact",
        input: { messages: [], budget: 1_000, mode: "manual" },
        expected: { fold: false, reason: "manual", folded: [], kept: [], shortened: [], fits: true },
      },
      {
        name: "a chat within the budget (nothing happens)",
        input: { messages: chat(10), budget: 10_000 },
        expected: { fold: false, reason: null, folded: [], kept: range(0, 20), shortened: [], fits: true },
      },
      {
        name: "a chat over the budget (whole turns leave until half the budget, the ADR's rule)",
        input: { messages: chat(10), budget: 5_000, foldShare: 0.5 },
        expected: {
          fold: true,
          reason: "budget",
          folded: range(0, 14),
          kept: range(14, 20),
          shortened: [],
          fits: true,
          atMost: 2_500,
        },
      },
      {
        name: "a chat over the budget with a factor of 2",
        input: { messages: chat(10), budget: 10_000, factor: 2, foldShare: 0.5 },
        expected: {
          fold: true,
          reason: "budget",
          folded: range(0, 14),
          kept: range(14, 20),
          shortened: [],
          fits: true,
          atMost: 5_000,
        },
      },
      {
        name: "a chat with a summary (counted in what is kept)",
        input: { messages: chat(10), budget: 5_000, summary: words(200), foldShare: 0.5 },
        expected: {
          fold: true,
          reason: "budget",
          folded: range(0, 16),
          kept: range(16, 20),
          shortened: [],
          fits: true,
          atMost: 2_500,
        },
      },
      {
        name: "a chat over a small budget (whole turns leave until 0.3 of it)",
        input: { messages: chat(10), budget: 5_000 },
        expected: {
          fold: true,
          reason: "budget",
          folded: range(0, 16),
          kept: range(16, 20),
          shortened: [],
          fits: true,
          atMost: 1_500,
        },
      },
      {
        name: "a chat past 0.85 of a small budget when a turn begins, with early folds at 0.85 (folds early)",
        input: {
          messages: [...chat(6), message(12, "user", text(hundredWords))],
          budget: 5_000,
          earlyFoldShare: 0.85,
        },
        expected: {
          fold: true,
          reason: "budget",
          folded: range(0, 10),
          kept: range(10, 13),
          shortened: [],
          fits: true,
          atMost: 1_500,
        },
      },
      {
        name: "the same by default: no fold until over the budget (the ADR's rule, at every budget)",
        input: { messages: [...chat(6), message(12, "user", text(hundredWords))], budget: 5_000 },
        expected: { fold: false, reason: null, folded: [], kept: range(0, 13), shortened: [], fits: true },
      },
      {
        name: "a chat over a budget of 50,000 or more (the ADR's rule by default: to half of it)",
        input: { messages: chat(100), budget: 60_000 },
        expected: {
          fold: true,
          reason: "budget",
          folded: range(0, 116),
          kept: range(116, 200),
          shortened: [],
          fits: true,
          atMost: 30_000,
        },
      },
      {
        name: "a chat past 600 messages (to half of that)",
        input: { messages: tinyTurns, budget: 100_000 },
        expected: {
          fold: true,
          reason: "messages",
          folded: range(0, 400),
          kept: range(400, 700),
          shortened: [],
          fits: true,
        },
      },
      {
        name: "a chat past 8 MiB (to half of that)",
        input: { messages: pictureTurns, budget: 100_000 },
        expected: { fold: true, reason: "bytes", folded: range(0, 14), kept: range(14, 20), shortened: [], fits: true },
      },
      {
        name: "a chat already folded (what came before is skipped)",
        input: { messages: chat(10), budget: 10_000, previous: { firstKeptSeq: 10, textLimit: null } },
        expected: { fold: false, reason: null, folded: [], kept: range(10, 20), shortened: [], fits: true },
      },
      {
        name: "/compact (all but the newest turn leave)",
        input: { messages: chat(10), budget: 100_000, mode: "manual" },
        expected: { fold: true, reason: "manual", folded: range(0, 18), kept: [18, 19], shortened: [], fits: true },
      },
      {
        name: "/compact with one turn (nothing to fold)",
        input: { messages: chat(1), budget: 100_000, mode: "manual" },
        expected: { fold: false, reason: "manual", folded: [], kept: [0, 1], shortened: [], fits: true },
      },
      {
        name: "a heal (all but the turn being answered leave, and it is shortened to half the budget)",
        input: { messages: bigLastTurn, budget: 5_000, mode: "heal" },
        expected: {
          fold: true,
          reason: "too-long",
          folded: range(0, 10),
          kept: [10, 11],
          shortened: [11],
          fits: true,
          atMost: 2_500,
        },
      },
      {
        name: "one giant turn (its longest text shortened, the model's messages untouched)",
        input: { messages: giantTurn, budget: 5_000 },
        expected: {
          fold: false,
          reason: "budget",
          folded: [],
          kept: [0, 1, 2, 3],
          shortened: [2],
          fits: true,
          atMost: 2_500,
        },
      },
      {
        name: "a turn made only of a picture, bigger than the budget (nothing can be shortened)",
        input: {
          messages: [message(0, "user", [{ type: "picture", name: "a.png", mediaType: "image/png", data: "AAAA" }])],
          budget: 1_000,
        },
        expected: { fold: false, reason: "budget", folded: [], kept: [0], shortened: [], fits: false },
      },
      {
        name: "a window smaller than the system prompt (budget 0: all but the last turn leave, it does not fit)",
        input: { messages: chat(10), budget: computeBudget({ window: 4_000, systemTokens: 6_000 }).budget },
        expected: { fold: true, reason: "budget", folded: range(0, 18), kept: [18, 19], shortened: [18], fits: false },
      },
      {
        name: "a 1M window (the 100K cap applies)",
        input: {
          messages: chat(200),
          budget: computeBudget({ window: 1_000_000, systemTokens: 2_000, toolTokens: 3_000 }).budget,
        },
        expected: {
          fold: true,
          reason: "budget",
          folded: range(0, 258),
          kept: range(258, 400),
          shortened: [],
          fits: true,
          atMost: 50_000,
        },
      },
      {
        name: "a giant turn of emoji",
        input: {
          messages: [message(0, "user", text("😀👍🏽 ".repeat(20_000))), message(1, "assistant", text("🙂"))],
          budget: 5_000,
        },
        expected: {
          fold: false,
          reason: "budget",
          folded: [],
          kept: [0, 1],
          shortened: [0],
          fits: true,
          atMost: 2_500,
        },
      },
      {
        name: "a giant turn of Chinese",
        input: {
          messages: [
            message(0, "user", text("这是一个很长的中文句子。".repeat(10_000))),
            message(1, "assistant", text("好")),
          ],
          budget: 5_000,
        },
        expected: {
          fold: false,
          reason: "budget",
          folded: [],
          kept: [0, 1],
          shortened: [0],
          fits: true,
          atMost: 2_500,
        },
      },
    ] satisfies { name: string; input: FoldInput; expected: Expected }[])(
      "should plan $name",
      ({ input, expected }) => {
        const messages = deepFreeze(input.messages);
        const plan = planFold({ ...input, messages });
        expect(plan.fold).toBe(expected.fold);
        expect(plan.reason).toBe(expected.reason);
        expect(seqs(plan.folded)).toEqual(expected.folded);
        expect(seqs(plan.kept)).toEqual(expected.kept);
        expect(plan.shortened.map((shortened) => shortened.seq)).toEqual(expected.shortened);
        expect(plan.fits).toBe(expected.fits);
        expect(plan.firstKeptSeq).toBe(expected.kept[0] ?? 0);
        if (expected.atMost !== undefined) expect(plan.tokens).toBeLessThanOrEqual(expected.atMost);
        const factor = input.factor ?? 1;
        const sent = estimateMessagesTokens(buildRequestMessages(plan.kept, input.summary));
        expect(factor * sent).toBeLessThanOrEqual(plan.tokens);
        if (expected.fits) expect(plan.tokens).toBeLessThanOrEqual(input.budget);
        for (const kept of plan.kept) {
          expect(loneSurrogate.test(JSON.stringify(kept.parts).replace(/\\u[0-9a-f]{4}/g, ""))).toBe(false);
          if (kept.role === "assistant") expect(messages).toContain(kept);
        }
      },
    );
  });

  describe("given the state of the last plan", () => {
    it("should keep a shortened turn's texts as they were and hold new ones to the same limit, so the request only grows at its end", () => {
      const cache = createEstimateCache();
      const first = planFold({ messages: giantTurn, budget: 5_000, cache });
      expect(first.state.textLimit).not.toBeNull();
      const more = [
        ...giantTurn,
        message(4, "tool", [{ type: "tool-result", callId: "c2", text: words(1_000) }]),
        message(5, "assistant", text("done")),
      ];
      const second = planFold({ messages: more, budget: 5_000, previous: first.state, cache });
      expect(second.changed).toBe(false);
      expect(second.state).toBe(first.state);
      expect(second.kept.slice(0, first.kept.length)).toEqual(first.kept);
      expect(second.shortened.map((shortened) => shortened.seq)).toEqual([2, 4]);
    });

    it("should leave the state as it was when nothing changes", () => {
      const previous: FoldState = { firstKeptSeq: 4, textLimit: null };
      const plan = planFold({ messages: chat(5), budget: 10_000, previous });
      expect(plan.state).toBe(previous);
      expect(plan.changed).toBe(false);
      expect(plan.before).toEqual(plan.after);
    });

    it("should give the sizes before and after a fold", () => {
      const plan = planFold({ messages: chat(10), budget: 5_000 });
      expect(plan.before).toEqual({ messages: 20, tokens: 7_000 });
      expect(plan.after).toEqual({ messages: 4, tokens: 1_400 });
      expect(plan.bytes).toBe(plan.kept.reduce((sum, kept) => sum + estimateMessageBytes(kept), 0));
    });
  });

  describe("given generated chats replayed request by request", () => {
    it("should keep every promise of the fold", () => {
      fc.assert(
        fc.property(
          generatedChat,
          fc.integer({ min: 6_000, max: 30_000 }),
          fc.constantFrom(1, 1.3),
          (messages, budget, factor) => {
            replayAndCheck(deepFreeze(messages), budget, factor);
          },
        ),
        { numRuns: 150 },
      );
    });

    it("should fold all but the last turn on /compact and on a heal, and never touch the model's messages", () => {
      fc.assert(
        fc.property(
          generatedChat,
          fc.integer({ min: 6_000, max: 30_000 }),
          fc.constantFrom("manual", "heal"),
          (messages, budget, mode) => {
            const frozen = deepFreeze(messages);
            const plan = planFold({ messages: frozen, budget, mode });
            const turns = splitTurns(frozen);
            const last = turns.at(-1);
            expect(seqs(plan.kept)).toEqual(seqs(last ? frozen.slice(last.from) : []));
            expect(seqs(plan.folded)).toEqual(seqs(last ? frozen.slice(0, last.from) : []));
            expect(plan.fits).toBe(true);
            if (mode === "heal") expect(plan.tokens).toBeLessThanOrEqual(budget / 2);
            checkKeptAgainstLog(plan, frozen);
          },
        ),
        { numRuns: 100 },
      );
    });
  });

  describe("given the real transcripts of test-fixtures/chats", () => {
    const conversations = readConversations();

    it.each([
      { window: 8_000, systemTokens: 500, toolTokens: 0, which: "all" },
      { window: 32_000, systemTokens: 2_000, toolTokens: 3_000, which: "long" },
      { window: 128_000, systemTokens: 2_000, toolTokens: 3_000, which: "long" },
    ])("should keep every promise of the fold at $window tokens on $which conversations", ({ which, ...window }) => {
      const { budget } = computeBudget(window);
      const chosen = conversations.filter((conversation) => which === "all" || conversation.long);
      expect(chosen.length).toBeGreaterThan(0);
      for (const conversation of chosen) replayAndCheck(conversation.messages, budget, 1);
    });
  });
});

/** Replays a chat as an engine would (a plan before each assistant message, the state kept) and checks each plan. */
function replayAndCheck(messages: readonly ChatMessage[], budget: number, factor: number): void {
  const cache = createEstimateCache();
  let state: FoldState = initialFoldState;
  let summary: string | null = null;
  let folds = 0;
  let previousRequest: readonly ChatMessage[] | null = null;
  const requestPoints = messages
    .flatMap((value, index) => (value.role === "assistant" ? [index] : []))
    .concat(messages.length);
  for (const end of requestPoints) {
    const history = messages.slice(0, end);
    if (history.length === 0) continue;
    const before = state;
    let plan = planFold({ messages: history, summary, budget, factor, previous: state, cache });
    checkFold(plan, history, before, budget);
    let changed = plan.changed;
    // As the engine does: after a fold the summary is rewritten and the plan made again with it.
    while (plan.fold) {
      summary = `Summary ${++folds}: ${words(40)}`;
      state = plan.state;
      plan = planFold({ messages: history, summary, budget, factor, previous: state, cache });
      checkFold(plan, history, state, budget);
      changed = true;
    }
    state = plan.state;
    checkKeptAgainstLog(plan, history);

    // The turn being answered always stays.
    const last = splitTurns(history).at(-1);
    if (last) expect(seqs(plan.kept).slice(-(last.to - last.from))).toEqual(seqs(history.slice(last.from)));
    // The planned request never exceeds the budget.
    const request = buildRequestMessages(plan.kept, summary);
    expect(plan.fits).toBe(true);
    expect(plan.tokens).toBeLessThanOrEqual(budget);
    expect(factor * estimateMessagesTokens(request, undefined, cache)).toBeLessThanOrEqual(budget);
    // Between two folds the request grows only at its end.
    if (!changed && previousRequest !== null) {
      expect(request.length).toBeGreaterThanOrEqual(previousRequest.length);
      for (const [index, sent] of previousRequest.entries()) {
        const now = request[index] as ChatMessage;
        if (now !== sent) expect(now).toEqual(sent);
      }
    }
    previousRequest = request;
  }
}

/** Only whole turns leave, only from the front, in order; after an auto fold what is kept fits half the budget unless one turn alone is bigger. */
function checkFold(plan: FoldPlan, history: readonly ChatMessage[], previous: FoldState, budget: number): void {
  const from = history.findIndex((value) => value.seq >= previous.firstKeptSeq);
  const wasKept = from === -1 ? [] : history.slice(from);
  expect(plan.firstKeptSeq).toBeGreaterThanOrEqual(previous.firstKeptSeq);
  expect(seqs([...plan.folded, ...plan.kept])).toEqual(seqs(wasKept));
  if (plan.fold) {
    expect(plan.kept[0]?.role).toBe("user");
    expect(plan.folded.length).toBeGreaterThan(0);
    if (splitTurns(plan.kept).length > 1) expect(plan.tokens).toBeLessThanOrEqual(Math.ceil(budget / 2));
  }
}

/** Kept messages are the log's, or copies of the person's and tools' messages with texts shortened; the model's are the log's own objects. */
function checkKeptAgainstLog(plan: FoldPlan, history: readonly ChatMessage[]): void {
  const bySeq = new Map(history.map((value) => [value.seq, value]));
  for (const kept of plan.kept) {
    const original = bySeq.get(kept.seq) as ChatMessage;
    if (original.role === "assistant") expect(kept).toBe(original);
    if (kept === original) continue;
    expect(kept.role).toBe(original.role);
    expect(kept.parts.length).toBe(original.parts.length);
    for (const [index, part] of kept.parts.entries()) {
      const before = original.parts[index] as MessagePart;
      if (!isShortenablePart(original, before)) expect(part).toBe(before);
    }
  }
}

const unit = fc.constantFrom("a", "b", "Z", " ", "\n", "1", "{", '"', "中", "😀", "é", "я");
const longText = fc.oneof(fc.string({ unit, maxLength: 3_000 }), fc.integer({ min: 0, max: 1_500 }).map(words));
const shortText = fc.string({ unit, maxLength: 80 });

/** Chats of turns: a person's message, then model answers, tool calls and tool results; sometimes tool lines first. */
const generatedChat: fc.Arbitrary<ChatMessage[]> = fc
  .record({
    opening: fc.array(shortText, { maxLength: 2 }),
    turns: fc.array(
      fc.record({
        person: fc.oneof({ weight: 5, arbitrary: longText }, { weight: 1, arbitrary: fc.constant(null) }),
        rounds: fc.array(fc.record({ say: shortText, result: longText }), { maxLength: 5 }),
        answer: fc.option(shortText),
      }),
      { minLength: 1, maxLength: 12 },
    ),
  })
  .map(({ opening, turns }) => {
    const messages: ChatMessage[] = [];
    const add = (role: MessageRole, parts: MessagePart[]) => messages.push({ seq: messages.length, role, parts });
    for (const line of opening) add("tool", text(line));
    for (const turn of turns) {
      add(
        "user",
        turn.person === null
          ? [{ type: "picture", name: "p.png", mediaType: "image/png", data: "AAAA" }]
          : [{ type: "text", text: turn.person }],
      );
      for (const round of turn.rounds) {
        const id = `call_${messages.length}`;
        add("assistant", [
          { type: "thinking", text: "checking", signature: "c2lnbmF0dXJl" },
          { type: "text", text: round.say },
          { type: "tool-call", id, name: "run", arguments: '{"cmd":"ls"}' },
        ]);
        add("tool", [{ type: "tool-result", callId: id, name: "run", text: round.result }]);
      }
      if (turn.answer !== null) add("assistant", text(turn.answer));
    }
    return messages;
  });

interface RealConversation {
  readonly messages: readonly ChatMessage[];
  readonly long: boolean;
}

/** The recorded chats as the engine's log would hold them (long: 30+ messages and 50,000+ characters). */
function readConversations(): RealConversation[] {
  return loadConversations().map((conversation) => ({
    messages: deepFreeze(conversation.messages),
    long: conversation.messages.length >= 30 && conversation.characters >= 50_000,
  }));
}
