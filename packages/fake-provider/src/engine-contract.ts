import {
  type BranchMessage,
  ChatBusyError,
  type ChatMessage,
  type Engine,
  type EngineEvent,
  hasBranches,
  hasContext,
  InvalidChatIdError,
  messageText,
  TurnSequenceError,
} from "@conch/engine-client";
import { afterEach, describe, expect, it, vi } from "vitest";

/** One answered turn, as the engine under test must play it. */
export interface ContractTurn {
  /** What the model answers. */
  readonly reply: string;
  /** The engine folds before answering (the contract sends {@link EngineUnderTest.longText} for these chats). */
  readonly fold?: boolean;
  /** The model's first request of the turn is refused as too long; the engine heals it quietly. */
  readonly heal?: boolean;
  /** The answer streams slowly enough to abort it, or to send into it, while it is written. */
  readonly slow?: boolean;
  /**
   * The turn ends with a problem instead of an answer: `too-long` (refused as too long twice: the heal did not
   * help) or `offline` (the provider cannot be reached; its next step is to try again). `reply` is then unused.
   */
  readonly problem?: "too-long" | "offline";
}

/** What is already there when the engine under test starts. */
export interface EngineSetup {
  /** Chats already written, by chat id: their logs (seq 0, 1, 2, ...). */
  readonly chats?: Readonly<Record<string, readonly ChatMessage[]>>;
}

/** An engine set up for the contract. */
export interface EngineUnderTest {
  readonly engine: Engine;
  /** Another engine over the same store: another tab, or the page after a reload. */
  another(): Engine | Promise<Engine>;
  /** A person's message long enough that the third in a row folds the chat and the second does not. */
  readonly longText: string;
  /** Releases what the setup holds (servers, folders). */
  close?(): Promise<void>;
}

/**
 * Sets an engine up to play `turns`, in order, one per answered turn, across every engine `another()` gives
 * (they share one provider and one store). Folds happen only where a turn says `fold`.
 */
export type MakeEngine = (turns: readonly ContractTurn[], setup?: EngineSetup) => Promise<EngineUnderTest>;

async function collect(stream: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function typesOf(events: readonly EngineEvent[]): string[] {
  return events.map((event) => event.type).filter((type) => type !== "text-delta" && type !== "thinking-delta");
}

function textOf(events: readonly EngineEvent[]): string {
  return events.flatMap((event) => (event.type === "text-delta" ? [event.delta] : [])).join("");
}

function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error("expected a rejection"),
    (error: unknown) => error,
  );
}

/**
 * The contract every engine keeps (ADR 0055's engine, STYLE 16): run it on each engine with
 * `engineContract("my engine", makeEngine)` in a Vitest file.
 */
export function engineContract(name: string, makeEngine: MakeEngine): void {
  describe(`engine contract: ${name}`, () => {
    const open: EngineUnderTest[] = [];
    const make = async (turns: readonly ContractTurn[]) => {
      const under = await makeEngine(turns);
      open.push(under);
      return under;
    };
    afterEach(async () => {
      vi.restoreAllMocks();
      await Promise.all(open.splice(0).map((under) => under.close?.()));
    });

    it("should play a turn as turn-start, the message, turn-end, the same on the stream and to listeners", async () => {
      const { engine } = await make([{ reply: "Hello there, how can I help?" }]);
      const heard: EngineEvent[] = [];
      engine.subscribe((event) => heard.push(event));
      const stream = engine.sendTurn({ chatId: "order", seq: 0, text: "Hi" });
      const events = await collect(stream);
      const types = typesOf(events);
      expect(types[0]).toBe("turn-start");
      expect(types.at(-1)).toBe("turn-end");
      expect(types.filter((type) => type !== "usage")).toEqual([
        "turn-start",
        "message-start",
        "message-end",
        "turn-end",
      ]);
      expect(textOf(events)).toBe("Hello there, how can I help?");
      const firstDelta = events.findIndex((event) => event.type === "text-delta");
      expect(firstDelta).toBeGreaterThan(events.findIndex((event) => event.type === "message-start"));
      expect(events.findLastIndex((event) => event.type === "text-delta")).toBeLessThan(
        events.findIndex((event) => event.type === "message-end"),
      );
      expect(heard).toEqual(events);
      const end = await stream.done;
      expect(end).toEqual(events.at(-1));
      expect(end).toMatchObject({ type: "turn-end", chatId: "order", seq: 0, status: "done" });
      const chat = await engine.loadChat("order");
      expect(chat.messages.map((message) => [message.seq, message.role, messageText(message)])).toEqual([
        [0, "user", "Hi"],
        [1, "assistant", "Hello there, how can I help?"],
      ]);
      expect(chat.problem).toBeNull();
    });

    it("should fold before answering: compacting, then compacted, then the answer, every message kept in the log", async () => {
      const { engine, longText } = await make([{ reply: "one" }, { reply: "two" }, { reply: "three", fold: true }]);
      for (const seq of [0, 2]) {
        const events = await collect(engine.sendTurn({ chatId: "fold", seq, text: `${seq} ${longText}` }));
        expect(typesOf(events)).not.toContain("compacted");
      }
      const events = await collect(engine.sendTurn({ chatId: "fold", seq: 4, text: `4 ${longText}` }));
      const types = typesOf(events);
      expect(types.indexOf("compacting")).toBeGreaterThan(types.indexOf("turn-start"));
      expect(types.indexOf("compacted")).toBeGreaterThan(types.indexOf("compacting"));
      expect(types.indexOf("message-start")).toBeGreaterThan(types.indexOf("compacted"));
      const compacted = events.find((event) => event.type === "compacted");
      expect(compacted?.type === "compacted" && compacted.firstKeptSeq).toBeGreaterThan(0);
      expect(compacted?.type === "compacted" && compacted.firstKeptSeq).toBeLessThanOrEqual(4);
      expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
      const chat = await engine.loadChat("fold");
      expect(chat.summary?.firstKeptSeq).toBe(compacted?.type === "compacted" ? compacted.firstKeptSeq : -1);
      expect(chat.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(messageText(chat.messages[5] as never)).toBe("three");
    });

    it("should heal a too-long refusal quietly: healed and a health note, then the answer", async () => {
      const { engine } = await make([{ reply: "The healed answer.", heal: true }]);
      const events = await collect(engine.sendTurn({ chatId: "heal", seq: 0, text: "And now?" }));
      const types = typesOf(events);
      expect(types).toContain("healed");
      expect(types).not.toContain("turn-problem");
      expect(types.indexOf("health-note")).toBeGreaterThan(types.indexOf("healed"));
      expect(textOf(events)).toBe("The healed answer.");
      expect(events.at(-1)).toMatchObject({ type: "turn-end", status: "done" });
      const chat = await engine.loadChat("heal");
      expect(chat.healthNotes[0]?.kind).toBe("healed");
    });

    it("should end a turn aborted mid-stream as aborted, keep what was written, and take the next turn", async () => {
      const reply = Array.from({ length: 200 }, (_, index) => `word${index}`).join(" ");
      const { engine } = await make([{ reply, slow: true }, { reply: "Next." }]);
      const controller = new AbortController();
      const stream = engine.sendTurn({ chatId: "abort", seq: 0, text: "Talk", abortSignal: controller.signal });
      const events: EngineEvent[] = [];
      for await (const event of stream) {
        events.push(event);
        if (event.type === "text-delta") controller.abort();
      }
      expect((await stream.done).status).toBe("aborted");
      const written = textOf(events);
      expect(written.length).toBeGreaterThan(0);
      expect(reply.startsWith(written)).toBe(true);
      expect(events.find((event) => event.type === "message-end")).toMatchObject({ finishReason: "aborted" });
      const chat = await engine.loadChat("abort");
      expect(chat.messages.map((message) => [message.seq, message.role])).toEqual([
        [0, "user"],
        [1, "assistant"],
      ]);
      expect(reply.startsWith(messageText(chat.messages[1] as never))).toBe(true);
      expect((await engine.sendTurn({ chatId: "abort", seq: 2, text: "Go on" }).done).status).toBe("done");
    });

    it("should refuse a second turn while one runs through that turn, never thrown at once", async () => {
      const reply = Array.from({ length: 100 }, (_, index) => `word${index}`).join(" ");
      const { engine } = await make([{ reply, slow: true }, { reply: "Second." }]);
      const first = engine.sendTurn({ chatId: "busy", seq: 0, text: "1" });
      let second: ReturnType<Engine["sendTurn"]> | undefined;
      expect(() => {
        second = engine.sendTurn({ chatId: "busy", seq: 2, text: "2" });
      }).not.toThrow();
      const refused = await rejectionOf((second as ReturnType<Engine["sendTurn"]>).done);
      expect(ChatBusyError.isInstance(refused)).toBe(true);
      await expect(collect(second as ReturnType<Engine["sendTurn"]>)).rejects.toSatisfy(ChatBusyError.isInstance);
      expect((await first.done).status).toBe("done");
      expect((await engine.sendTurn({ chatId: "busy", seq: 2, text: "2" }).done).status).toBe("done");
    });

    it("should refuse a stale seq, an unknown retry and an unsafe chat id through the turn", async () => {
      const { engine } = await make([{ reply: "First." }]);
      await engine.sendTurn({ chatId: "stale", seq: 0, text: "1" }).done;
      const heard: EngineEvent[] = [];
      engine.subscribe((event) => heard.push(event));
      let stale: ReturnType<Engine["sendTurn"]> | undefined;
      expect(() => {
        stale = engine.sendTurn({ chatId: "stale", seq: 0, text: "again" });
      }).not.toThrow();
      const refused = await rejectionOf((stale as ReturnType<Engine["sendTurn"]>).done);
      expect(TurnSequenceError.isInstance(refused)).toBe(true);
      expect(refused).toMatchObject({ chatId: "stale", expectedSeq: 2, actualSeq: 0 });
      await expect(collect(stale as ReturnType<Engine["sendTurn"]>)).rejects.toSatisfy(TurnSequenceError.isInstance);
      // A retry of a message that is not the person's (on engines with branches, the person's may be answered again).
      const retry = await rejectionOf(engine.sendTurn({ chatId: "stale", seq: 1, text: "1", retry: true }).done);
      expect(TurnSequenceError.isInstance(retry)).toBe(true);
      const unsafe = await rejectionOf(engine.sendTurn({ chatId: "../etc", seq: 0, text: "x" }).done);
      expect(InvalidChatIdError.isInstance(unsafe)).toBe(true);
      expect(heard).toEqual([]);
      expect((await engine.loadChat("stale")).messages).toHaveLength(2);
    });

    describe("branches (every engine of this package declares them)", () => {
      const shapeOf = (messages: readonly BranchMessage[]) =>
        messages.map((message) => [message.seq, messageText(message), message.siblings ?? null] as const);

      it("should edit a person's message as a new branch beside it, every version kept, the same in another engine", async () => {
        const { engine, another } = await make([{ reply: "A" }, { reply: "B" }, { reply: "C" }]);
        if (!hasBranches(engine)) throw new Error(`${engine.id} does not declare branches`);
        await engine.sendTurn({ chatId: "edit", seq: 0, text: "1" }).done;
        await engine.sendTurn({ chatId: "edit", seq: 2, text: "2" }).done;
        const events = await collect(engine.sendTurn({ chatId: "edit", seq: 4, parent: 1, text: "2 again" }));
        expect(events[0]).toMatchObject({ type: "turn-start", message: { seq: 4, parent: 1 } });
        expect(events.find((event) => event.type === "message-start")).toMatchObject({ seq: 5 });
        expect(events.at(-1)).toMatchObject({ type: "turn-end", seq: 4, status: "done" });
        for (const reader of [engine, await another()]) {
          const chat = await reader.loadChat("edit");
          expect(shapeOf(chat.messages)).toEqual([
            [0, "1", null],
            [1, "A", null],
            [4, "2 again", [2, 4]],
            [5, "C", null],
          ]);
          expect(chat).toMatchObject({ nextSeq: 6, activeLeaf: 5 });
        }
        // A parent that is not in the log is refused as a stale seq is.
        const stale = await rejectionOf(engine.sendTurn({ chatId: "edit", seq: 6, parent: 9, text: "x" }).done);
        expect(TurnSequenceError.isInstance(stale)).toBe(true);
      });

      it("should regenerate an answer to any person's message of the active branch beside the old one", async () => {
        const { engine, another } = await make([{ reply: "A" }, { reply: "B" }, { reply: "B2" }, { reply: "A2" }]);
        if (!hasBranches(engine)) throw new Error(`${engine.id} does not declare branches`);
        await engine.sendTurn({ chatId: "regen", seq: 0, text: "1" }).done;
        await engine.sendTurn({ chatId: "regen", seq: 2, text: "2" }).done;
        const events = await collect(engine.sendTurn({ chatId: "regen", seq: 2, text: "", retry: true }));
        expect(events.find((event) => event.type === "message-start")).toMatchObject({ seq: 4 });
        expect(events.at(-1)).toMatchObject({ type: "turn-end", seq: 2, status: "done" });
        let chat = await engine.loadChat("regen");
        expect(shapeOf(chat.messages)).toEqual([
          [0, "1", null],
          [1, "A", null],
          [2, "2", null],
          [4, "B2", [3, 4]],
        ]);
        // An earlier person's message: its answer again, the turns after it left on the old branch.
        expect((await engine.sendTurn({ chatId: "regen", seq: 0, text: "", retry: true }).done).status).toBe("done");
        for (const reader of [engine, await another()]) {
          chat = await reader.loadChat("regen");
          expect(shapeOf(chat.messages)).toEqual([
            [0, "1", null],
            [5, "A2", [1, 5]],
          ]);
          expect(chat).toMatchObject({ nextSeq: 6, activeLeaf: 5 });
        }
      });

      it("should switch branches: the newest leaf through the message chosen, and the next turn continues it", async () => {
        const { engine, another } = await make([{ reply: "A" }, { reply: "B" }, { reply: "C" }, { reply: "D" }]);
        if (!hasBranches(engine)) throw new Error(`${engine.id} does not declare branches`);
        const branches = engine.capabilities.branches;
        await engine.sendTurn({ chatId: "switch", seq: 0, text: "1" }).done;
        await engine.sendTurn({ chatId: "switch", seq: 2, text: "2" }).done;
        await engine.sendTurn({ chatId: "switch", seq: 4, parent: 1, text: "2 again" }).done;
        const first = await branches.selectBranch("switch", 2);
        expect(shapeOf(first.messages)).toEqual([
          [0, "1", null],
          [1, "A", null],
          [2, "2", [2, 4]],
          [3, "B", null],
        ]);
        expect(first).toMatchObject({ nextSeq: 6, activeLeaf: 3 });
        expect(shapeOf((await (await another()).loadChat("switch")).messages).map(([seq]) => seq)).toEqual([
          0, 1, 2, 3,
        ]);
        expect((await engine.sendTurn({ chatId: "switch", seq: 6, text: "3" }).done).status).toBe("done");
        expect((await engine.loadChat("switch")).messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 6, 7]);
        // A message on the shared part: its newest leaf (the branch written last through it).
        const newest = await branches.selectBranch("switch", 0, { page: { limit: 2 } });
        expect(newest.messages.map((message) => message.seq)).toEqual([6, 7]);
        expect(newest).toMatchObject({ hasOlder: true, activeLeaf: 7 });
        const back = await branches.selectBranch("switch", 4);
        expect(back.messages.map((message) => message.seq)).toEqual([0, 1, 4, 5]);
        const unknown = await rejectionOf(branches.selectBranch("switch", 42));
        expect(TurnSequenceError.isInstance(unknown)).toBe(true);
        expect((await engine.loadChat("switch")).activeLeaf).toBe(5);
      });
    });

    it("should let two engines on one store take turns in one chat, each reading what the other wrote", async () => {
      const { engine: first, another } = await make([
        { reply: "From the first." },
        { reply: "From the second." },
        { reply: "First again." },
      ]);
      const second = await another();
      // The second has read the chat before the first wrote to it: its copy is stale.
      expect((await second.loadChat("shared")).messages).toEqual([]);
      expect((await first.sendTurn({ chatId: "shared", seq: 0, text: "1" }).done).status).toBe("done");
      expect((await second.sendTurn({ chatId: "shared", seq: 2, text: "2" }).done).status).toBe("done");
      expect((await first.sendTurn({ chatId: "shared", seq: 4, text: "3" }).done).status).toBe("done");
      for (const engine of [first, second]) {
        const chat = await engine.loadChat("shared");
        expect(chat.messages.map((message) => messageText(message))).toEqual([
          "1",
          "From the first.",
          "2",
          "From the second.",
          "3",
          "First again.",
        ]);
      }
      const refused = await rejectionOf(second.sendTurn({ chatId: "shared", seq: 4, text: "late" }).done);
      expect(refused).toMatchObject({ name: "TurnSequenceError", expectedSeq: 6, actualSeq: 4 });
    });

    it("should keep the turn and the other listeners going when a listener throws", async () => {
      const reported = vi.spyOn(console, "error").mockImplementation(() => undefined);
      const { engine } = await make([{ reply: "Still here." }]);
      engine.subscribe(() => {
        throw new Error("a listener's bug");
      });
      const heard: EngineEvent[] = [];
      engine.subscribe((event) => heard.push(event));
      const stream = engine.sendTurn({ chatId: "throw", seq: 0, text: "Hi" });
      const events = await collect(stream);
      expect((await stream.done).status).toBe("done");
      expect(heard).toEqual(events);
      expect(textOf(heard)).toBe("Still here.");
      expect(reported).toHaveBeenCalled();
    });

    it("should run a fold on request sent during a turn after that turn, in the chat's queue", async () => {
      const reply = Array.from({ length: 100 }, (_, index) => `word${index}`).join(" ");
      const { engine } = await make([{ reply: "First." }, { reply, slow: true }]);
      if (!hasContext(engine)) return;
      await engine.sendTurn({ chatId: "queue", seq: 0, text: "1" }).done;
      const heard: EngineEvent[] = [];
      engine.subscribe((event) => heard.push(event));
      const turn = engine.sendTurn({ chatId: "queue", seq: 2, text: "2" });
      const compacted = engine.capabilities.context.compact("queue");
      const [end, result] = await Promise.all([turn.done, compacted]);
      expect(end.status).toBe("done");
      expect(result.status).toBe("compacted");
      expect(result.status === "compacted" && result.summary.firstKeptSeq).toBe(2);
      const types = heard.map((event) => event.type);
      expect(types.indexOf("compacting")).toBeGreaterThan(types.indexOf("turn-end"));
      const chat = await engine.loadChat("queue");
      expect(chat.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3]);
      expect(chat.summary?.firstKeptSeq).toBe(2);
    });

    it("should show a reloaded chat as it was and go on from it", async () => {
      const { engine, another } = await make([{ reply: "One." }, { reply: "Two." }, { reply: "Three." }]);
      await engine.sendTurn({ chatId: "reload", seq: 0, text: "1" }).done;
      await engine.sendTurn({ chatId: "reload", seq: 2, text: "2" }).done;
      const before = await engine.loadChat("reload");
      const reloaded = await another();
      const after = await reloaded.loadChat("reload");
      expect(after.messages.map((message) => [message.seq, message.role, messageText(message)])).toEqual(
        before.messages.map((message) => [message.seq, message.role, messageText(message)]),
      );
      expect(after.summary).toEqual(before.summary);
      expect(after.usage).toEqual(before.usage);
      expect(after.problem).toEqual(before.problem);
      expect((await reloaded.sendTurn({ chatId: "reload", seq: 4, text: "3" }).done).status).toBe("done");
      expect(messageText((await reloaded.loadChat("reload")).messages[5] as never)).toBe("Three.");
    });

    it("should carry the context usage on turn-end, as the engine's own count says", async () => {
      const { engine } = await make([{ reply: "Counted." }]);
      const end = await engine.sendTurn({ chatId: "usage", seq: 0, text: "Count" }).done;
      if (!hasContext(engine)) return;
      expect(end.contextUsage).toBeDefined();
      expect(end.contextUsage).toEqual(await engine.capabilities.context.usage("usage"));
    });
  });
}
