import { describe, expect, it } from "vitest";
import { chatLogFrom } from "../mock/long-chat.js";
import { initialLearningState, learnBeforeFold, personWordsBetween } from "./learner.js";
import { createMemoryLearner } from "./memory-learner.js";

const log = [
  ...chatLogFrom([
    ["I prefer tabs over spaces. What is a monad?", "A monad is… I always use spaces myself."],
    ["My name is Ada. Fix the build.", "Done. Remember to run the tests."],
    ["We decided to ship on Friday.", "Noted."],
  ]),
  {
    seq: 6,
    role: "tool" as const,
    parts: [{ type: "tool-result" as const, callId: "x", text: "I prefer to be learned from (a tool)" }],
  },
];

describe("personWordsBetween", () => {
  it("should give only the person's own words, in the range", () => {
    expect(personWordsBetween(log, 0, 4)).toEqual([
      { seq: 0, text: "I prefer tabs over spaces. What is a monad?" },
      { seq: 2, text: "My name is Ada. Fix the build." },
    ]);
    expect(personWordsBetween(log, 1, 7).map((words) => words.seq)).toEqual([2, 4]);
  });

  it("should leave out a host's prompt to continue a cut-off reply", () => {
    const continued = [
      ...log,
      { seq: 7, role: "user" as const, parts: [{ type: "text" as const, text: "Continue" }], continuation: true },
      { seq: 8, role: "user" as const, parts: [{ type: "text" as const, text: "Thanks, that is all." }] },
    ];
    expect(personWordsBetween(continued, 6, 9)).toEqual([{ seq: 8, text: "Thanks, that is all." }]);
  });
});

describe("learnBeforeFold", () => {
  const now = () => 1234;

  it("given a fold, should learn only the person's words and record how far it read", async () => {
    const learner = createMemoryLearner();
    const result = await learnBeforeFold({ learner, chatId: "c", log, state: initialLearningState, untilSeq: 4, now });
    expect(result.outcome).toEqual({ status: "reviewed", proposals: 2 });
    expect(learner.memories.map((memory) => [memory.text, memory.status])).toEqual([
      ["I prefer tabs over spaces.", "saved"],
      ["My name is Ada.", "saved"],
    ]);
    expect(learner.memories.some((memory) => /always use spaces|Remember to run/.test(memory.text))).toBe(false);
    expect(result.state).toEqual({ readUntil: 4, learned: [{ at: 1234, fromSeq: 0, untilSeq: 4 }] });
  });

  it("given a second fold, should never read the same words twice", async () => {
    const learner = createMemoryLearner();
    const first = await learnBeforeFold({ learner, chatId: "c", log, state: initialLearningState, untilSeq: 4, now });
    const second = await learnBeforeFold({ learner, chatId: "c", log, state: first.state, untilSeq: 6, now });
    expect(learner.reviews.map((review) => review.words.map((words) => words.seq))).toEqual([[0, 2], [4]]);
    expect(second.state.readUntil).toBe(6);
    const again = await learnBeforeFold({ learner, chatId: "c", log, state: second.state, untilSeq: 6, now });
    expect(again.outcome).toEqual({ status: "skipped", why: "nothing-new" });
    expect(learner.reviews).toHaveLength(2);
  });

  it.each([
    ["throws", (learner: ReturnType<typeof createMemoryLearner>) => learner.failNext(), "failed"],
    ["answers unreadably", (learner: ReturnType<typeof createMemoryLearner>) => learner.garbleNext(), "unreadable"],
  ])("given a learner that %s, should mark nothing read", async (_name, arrange, status) => {
    const learner = createMemoryLearner();
    arrange(learner);
    const result = await learnBeforeFold({ learner, chatId: "c", log, state: initialLearningState, untilSeq: 4, now });
    expect(result.outcome.status).toBe(status);
    expect(result.state).toBe(initialLearningState);
    // The next fold offers the same words again.
    const retry = await learnBeforeFold({ learner, chatId: "c", log, state: result.state, untilSeq: 4, now });
    expect(retry.outcome.status).toBe("reviewed");
    expect(learner.reviews.map((review) => review.words.length)).toEqual([2, 2]);
  });

  it("given a learner without a model, should mark nothing read", async () => {
    const learner = createMemoryLearner({ noModel: true });
    const result = await learnBeforeFold({ learner, chatId: "c", log, state: initialLearningState, untilSeq: 4, now });
    expect(result.outcome).toEqual({ status: "no-model" });
    expect(result.state.readUntil).toBe(0);
  });

  it.each([
    ["an untrusted chat", { untrusted: true }],
    ["automatic remembering off", { autoRemember: false }],
  ])("given %s, should propose memories that wait for an OK", async (_name, flags) => {
    const learner = createMemoryLearner();
    await learnBeforeFold({ learner, chatId: "c", log, state: initialLearningState, untilSeq: 4, now, ...flags });
    expect(learner.memories.map((memory) => memory.status)).toEqual(["waiting", "waiting"]);
    learner.approve("memory-1");
    learner.undo("memory-2");
    expect(learner.memories.map((memory) => memory.status)).toEqual(["saved", "undone"]);
  });

  it.each(["routine", "group"] as const)("given a %s chat, should not learn at all", async (origin) => {
    const learner = createMemoryLearner();
    const result = await learnBeforeFold({
      learner,
      chatId: "c",
      log,
      state: initialLearningState,
      untilSeq: 4,
      now,
      origin,
    });
    expect(result.outcome).toEqual({ status: "skipped", why: "origin" });
    expect(learner.reviews).toHaveLength(0);
  });
});
