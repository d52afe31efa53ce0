import {
  type ApiEngineUnderTest,
  apiEngineUnderTest,
  type ContractTurn,
  type EngineUnderTest,
  mockEngineUnderTest,
} from "@conch/fake-provider";
import { lastAssistantMessageIsCompleteWithToolCalls } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { type Engine, hasBranches, hasContext } from "../engine.js";
import { NacreChatRefusedError, TurnSequenceError } from "../errors.js";
import { messageText } from "../messages.js";
import { nacreChatMessages, nacreDivider, nacreMessageSeqs, nacreNextSeq } from "./chat-messages.js";
import { TestChat, TestChatOnAi6, textOf } from "./testing/test-chat.js";
import { createNacreTransport } from "./transport.js";
import type { NacreUIMessage } from "./ui-message.js";

const setups: readonly [string, (turns: readonly ContractTurn[]) => Promise<EngineUnderTest>][] = [
  ["the API engine over the fake provider", (turns) => apiEngineUnderTest(turns)],
  ["the mock engine", mockEngineUnderTest],
];

let open: EngineUnderTest | null = null;
afterEach(async () => {
  await open?.close?.();
  open = null;
});

async function setUp<T extends EngineUnderTest>(make: Promise<T>): Promise<T> {
  open = await make;
  return open as T;
}

async function logOf(engine: Engine, chatId: string) {
  return (await engine.loadChat(chatId)).messages.map(
    (message) => `${message.seq} ${message.role} ${messageText(message)}`,
  );
}

function chatOn(engine: Engine, id: string, messages: NacreUIMessage[] = [], onData?: (part: unknown) => void) {
  return new TestChat({ id, transport: createNacreTransport(engine), messages, ...(onData ? { onData } : {}) });
}

describe.each(setups)("createNacreTransport on %s", (_name, make) => {
  it("should fold on /compact, never sending it to the model, and keep the next seq from the log", async () => {
    const { engine } = await setUp(make([{ reply: "One." }, { reply: "Two." }, { reply: "Three." }]));
    const chat = chatOn(engine, "compact");
    await chat.sendMessage({ text: "First" });
    await chat.sendMessage({ text: "Second" });
    const before = await logOf(engine, "compact");

    await chat.sendMessage({ text: "  /compact the numbers " });
    expect(await logOf(engine, "compact")).toEqual(before);
    if (!hasContext(engine)) {
      expect(NacreChatRefusedError.isInstance(chat.chatState.error)).toBe(true);
      return;
    }
    expect(chat.chatState.error).toBeUndefined();
    const fold = chat.messages.at(-1)?.parts.find((part) => part.type === "data-nacre-fold");
    expect(fold?.data).toMatchObject({ status: "compacted", reason: "manual" });
    expect(textOf(chat.messages.find((message) => message.id === nacreDivider(chat.messages)?.beforeMessageId))).toBe(
      "Second",
    );
    await chat.sendMessage({ text: "Third" });
    expect(chat.chatState.error).toBeUndefined();
    expect((await logOf(engine, "compact")).slice(4)).toEqual(["4 user Third", "5 assistant Three."]);
  });

  it("should take each seq from the log, and show the same chat after a reload", async () => {
    const { engine, another } = await setUp(make([{ reply: "Hello." }, { reply: "Fine, thanks." }, { reply: "Bye." }]));
    const chat = chatOn(engine, "two");

    await chat.sendMessage({ text: "Hi" });
    await chat.sendMessage({ text: "How are you?" });

    expect(chat.chatState.error).toBeUndefined();
    expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(chat.messages.map(textOf)).toEqual(["Hi", "Hello.", "How are you?", "Fine, thanks."]);
    expect(chat.messages[3]?.metadata).toMatchObject({ seq: 2, lastSeq: 3 });
    const reloaded = await another();
    expect(await logOf(reloaded, "two")).toEqual([
      "0 user Hi",
      "1 assistant Hello.",
      "2 user How are you?",
      "3 assistant Fine, thanks.",
    ]);

    const loaded = nacreChatMessages(await reloaded.loadChat("two"));
    expect(loaded.map(textOf)).toEqual(chat.messages.map(textOf));
    expect(loaded.map((message) => message.id)).toEqual([
      "nacre-user-0",
      "nacre-answer-0",
      "nacre-user-2",
      "nacre-answer-2",
    ]);
    const afterReload = chatOn(reloaded, "two", loaded);
    await afterReload.sendMessage({ text: "Bye" });
    expect(afterReload.chatState.error).toBeUndefined();
    expect((await logOf(reloaded, "two")).slice(4)).toEqual(["4 user Bye", "5 assistant Bye."]);
  });

  it("should refuse an edit, a regenerate of a kept answer, a send after a delete and a stale tab, leaving the log as it was", async () => {
    const { engine, another } = await setUp(make([{ reply: "One." }, { reply: "Two." }, { reply: "Three." }]));
    const chat = chatOn(engine, "honest");
    await chat.sendMessage({ text: "First" });
    const staleTab = chatOn(await another(), "honest", nacreChatMessages(await engine.loadChat("honest")));
    await chat.sendMessage({ text: "Second" });
    const log = await logOf(engine, "honest");
    expect(log).toHaveLength(4);

    // Without versions, an edit or a regenerate of a kept answer would cut the log (with them: the next test).
    if (!hasBranches(engine)) {
      await chat.regenerate();
      expect(NacreChatRefusedError.isInstance(chat.chatState.error) && chat.chatState.error.reason).toBe("regenerate");
      expect(await logOf(engine, "honest")).toEqual(log);

      const edited = chatOn(engine, "honest", nacreChatMessages(await engine.loadChat("honest")));
      await edited.sendMessage({ text: "First, changed", messageId: "nacre-user-0" });
      expect(NacreChatRefusedError.isInstance(edited.chatState.error) && edited.chatState.error.reason).toBe("edit");
      expect(await logOf(engine, "honest")).toEqual(log);
    }

    const deleted = chatOn(engine, "honest", nacreChatMessages(await engine.loadChat("honest")).slice(0, 2));
    await deleted.sendMessage({ text: "After a delete" });
    expect(TurnSequenceError.isInstance(deleted.chatState.error)).toBe(true);
    expect(await logOf(engine, "honest")).toEqual(log);

    await staleTab.sendMessage({ text: "From the other tab" });
    expect(TurnSequenceError.isInstance(staleTab.chatState.error)).toBe(true);
    expect(await logOf(engine, "honest")).toEqual(log);
  });

  it("should edit a sent message and regenerate a kept answer as new versions where the engine keeps them", async () => {
    const { engine } = await setUp(
      make([{ reply: "One." }, { reply: "Two." }, { reply: "Two again." }, { reply: "New." }, { reply: "After." }]),
    );
    const chat = chatOn(engine, "versions");
    await chat.sendMessage({ text: "First" });
    await chat.sendMessage({ text: "Second" });
    if (!hasBranches(engine)) {
      // No versions: the regenerate is refused before anything is written (the test above has the edit too).
      await chat.regenerate();
      expect(NacreChatRefusedError.isInstance(chat.chatState.error)).toBe(true);
      expect(await logOf(engine, "versions")).toHaveLength(4);
      return;
    }

    // Regenerate: the AI SDK's reader replaces the last answer; the log keeps the old one beside the new.
    await chat.regenerate();
    expect(chat.chatState.error).toBeUndefined();
    expect(chat.messages.map(textOf)).toEqual(["First", "One.", "Second", "Two again."]);
    expect(chat.messages[3]?.metadata).toMatchObject({ seq: 2, lastSeq: 4 });
    let loaded = await engine.loadChat("versions");
    expect(loaded.messages.map((message) => message.seq)).toEqual([0, 1, 2, 4]);
    expect(loaded.messages[3]?.siblings).toEqual([3, 4]);

    // Edit the first message: a new version after the root, answered; the page shows that branch alone.
    await chat.sendMessage({ text: "First, changed", messageId: chat.messages[0]?.id as string });
    expect(chat.chatState.error).toBeUndefined();
    expect(chat.messages.map(textOf)).toEqual(["First, changed", "New."]);
    loaded = await engine.loadChat("versions");
    expect(loaded.messages.map((message) => `${message.seq} ${messageText(message)}`)).toEqual([
      "5 First, changed",
      "6 New.",
    ]);
    expect(loaded.messages[0]?.siblings).toEqual([0, 5]);

    // The next message continues the edited branch at the log's next seq; a reload shows the same.
    await chat.sendMessage({ text: "Then" });
    expect(chat.chatState.error).toBeUndefined();
    expect((await logOf(engine, "versions")).slice(2)).toEqual(["7 user Then", "8 assistant After."]);
    expect(nacreChatMessages(await engine.loadChat("versions")).map(textOf)).toEqual(chat.messages.map(textOf));
  });

  it("should show a fold in the answer and place the divider before the first kept message, live and after a reload", async () => {
    const { engine, another, longText } = await setUp(
      make([{ reply: "Noted one." }, { reply: "Noted two." }, { reply: "Noted three.", fold: true }]),
    );
    const chat = chatOn(engine, "fold");
    for (const text of ["one", "two", "three"]) await chat.sendMessage({ text: `${text}: ${longText}` });

    expect(chat.chatState.error).toBeUndefined();
    const folds = chat.messages.flatMap((message) => message.parts.filter((part) => part.type === "data-nacre-fold"));
    expect(folds.map((part) => part.data.status)).toEqual(["compacted"]);
    const live = nacreDivider(chat.messages);
    const snapshot = await (await another()).loadChat("fold");
    const firstKept = snapshot.summary?.firstKeptSeq;
    expect(firstKept).toBeGreaterThan(0);
    const liveIndex = chat.messages.findIndex((message) => message.id === live?.beforeMessageId);
    expect(nacreMessageSeqs(chat.messages)[liveIndex]?.first).toBe(firstKept);

    const loaded = nacreChatMessages(snapshot);
    const reloaded = nacreDivider(loaded);
    expect(reloaded?.summary).toEqual(snapshot.summary);
    expect(loaded.findIndex((message) => message.id === reloaded?.beforeMessageId)).toBe(liveIndex);
  });

  it("should send a heal's health note to onData only", async () => {
    const { engine } = await setUp(make([{ reply: "Healed answer.", heal: true }]));
    const data: unknown[] = [];
    const chat = chatOn(engine, "heal", [], (part) => data.push(part));
    await chat.sendMessage({ text: "Hi" });

    expect(chat.chatState.error).toBeUndefined();
    expect(data).toContainEqual(
      expect.objectContaining({ type: "data-nacre-health", data: expect.objectContaining({ kind: "healed" }) }),
    );
    expect(chat.messages[1]?.parts.some((part) => part.type === "data-nacre-health")).toBe(false);
    expect(textOf(chat.messages[1])).toBe("Healed answer.");
  });

  it("should stop the turn on stop, keep what was written, and go on at the log's next seq", async () => {
    const { engine } = await setUp(make([{ reply: "A long story. ".repeat(200), slow: true }, { reply: "Next." }]));
    const chat = chatOn(engine, "stop");
    const sending = chat.sendMessage({ text: "Tell me a story" });
    // Stopped once its first sentence has been shown (the log is checked for it below), not at its first piece.
    await expect.poll(() => textOf(chat.messages[1]), { timeout: 20_000 }).toMatch(/^A long story\./);
    await chat.stop();
    await sending;

    await chat.sendMessage({ text: "Next" });
    expect(chat.chatState.error).toBeUndefined();
    const log = await logOf(engine, "stop");
    // What the stopped answer wrote stays in the log, and the next message goes after it.
    expect(log).toEqual([
      "0 user Tell me a story",
      expect.stringMatching(/^1 assistant A long story\./),
      "2 user Next",
      "3 assistant Next.",
    ]);
    expect(chat.messages.map(textOf).slice(2)).toEqual(["Next", "Next."]);
  });
});

describe("createNacreTransport under ai 6's chat", () => {
  it("should run turns, seqs from the log, and continue an answer with tool results", async () => {
    const setup: ApiEngineUnderTest = await setUp(apiEngineUnderTest([]));
    setup.server.setReply((request) =>
      request.promptText.includes("12°C")
        ? { text: "It is 12°C in Oslo." }
        : request.lastUserText === "Hi"
          ? { text: "Hello." }
          : { toolCalls: [{ id: "call-1", name: "weather", arguments: { city: "Oslo" } }] },
    );
    const chat: TestChatOnAi6 = new TestChatOnAi6({
      id: "six",
      transport: createNacreTransport(setup.engine),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall({ toolCall }) {
        void chat.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: "12°C" } as never);
      },
    });
    await chat.sendMessage({ text: "Hi" });
    await chat.sendMessage({ text: "Weather in Oslo?" });
    await expect.poll(() => textOf(chat.messages[3]), { timeout: 20_000 }).toBe("It is 12°C in Oslo.");
    await expect.poll(() => chat.status).toBe("ready");

    expect(chat.chatState.error).toBeUndefined();
    expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(await logOf(setup.engine, "six")).toEqual([
      "0 user Hi",
      "1 assistant Hello.",
      "2 user Weather in Oslo?",
      "3 assistant ",
      "4 tool ",
      "5 assistant It is 12°C in Oslo.",
    ]);
  });
});

describe("createNacreTransport on the API engine, where the provider can be scripted", () => {
  it("should answer again in place after a problem (regenerate), with no second copy of the message", async () => {
    const setup: ApiEngineUnderTest = await setUp(apiEngineUnderTest([{ reply: "Answered at last." }]));
    setup.server.refuseNext(2, "openrouter", { models: ["chat"] });
    const chat = chatOn(setup.engine, "retry");
    await chat.sendMessage({ text: "Hi" });
    const problem = chat.messages[1]?.parts.find((part) => part.type === "data-nacre-problem");
    expect(problem?.data.problem.kind).toBe("too-long");
    expect(await logOf(setup.engine, "retry")).toEqual(["0 user Hi"]);

    await chat.regenerate();

    expect(chat.chatState.error).toBeUndefined();
    expect(chat.messages.map((message) => message.id)).toEqual([expect.any(String), "nacre-answer-0"]);
    expect(textOf(chat.messages[1])).toBe("Answered at last.");
    expect(await logOf(setup.engine, "retry")).toEqual(["0 user Hi", "1 assistant Answered at last."]);
  });

  it("should send Continue as a continuation the log keeps, and put the window's use on a loaded chat's last answer", async () => {
    const setup: ApiEngineUnderTest = await setUp(apiEngineUnderTest([{ reply: "One, two," }, { reply: "three." }]));
    const chat = chatOn(setup.engine, "cut");
    await chat.sendMessage({ text: "Count to three" });
    await chat.sendMessage({ text: "Continue", metadata: { seq: nacreNextSeq(chat.messages), continuation: true } });

    expect(chat.chatState.error).toBeUndefined();
    const snapshot = await setup.engine.loadChat("cut");
    expect(snapshot.messages.map((message) => [message.role, message.continuation ?? false])).toEqual([
      ["user", false],
      ["assistant", false],
      ["user", true],
      ["assistant", false],
    ]);
    expect(snapshot.contextUsage).not.toBeNull();
    const loaded = nacreChatMessages(snapshot);
    expect(loaded[2]?.metadata).toEqual({ seq: 2, continuation: true });
    // A meter reads the last answer's: after a reload it shows what it showed before.
    expect(loaded.at(-1)?.metadata?.contextUsage).toEqual(snapshot.contextUsage);
    expect(loaded[1]?.metadata?.contextUsage).toBeUndefined();
  });

  it("should continue the same answer with addToolOutput's results, at the log's next seq", async () => {
    const setup: ApiEngineUnderTest = await setUp(apiEngineUnderTest([]));
    setup.server.setReply((request) =>
      request.promptText.includes("12°C")
        ? { text: "It is 12°C in Oslo." }
        : { toolCalls: [{ id: "call-1", name: "weather", arguments: { city: "Oslo" } }] },
    );
    const chat: TestChat = new TestChat({
      id: "tools",
      transport: createNacreTransport(setup.engine),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall({ toolCall }) {
        void chat.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: "12°C" } as never);
      },
    });

    await chat.sendMessage({ text: "Weather in Oslo?" });
    await expect.poll(() => textOf(chat.messages[1]), { timeout: 20_000 }).toBe("It is 12°C in Oslo.");
    await expect.poll(() => chat.status).toBe("ready");

    expect(chat.chatState.error).toBeUndefined();
    expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(chat.messages[1]?.parts.map((part) => part.type)).toEqual([
      "step-start",
      "tool-weather",
      "step-start",
      "text",
    ]);
    expect(chat.messages[1]?.metadata).toMatchObject({ seq: 0, lastSeq: 3 });
    const log = (await setup.engine.loadChat("tools")).messages;
    expect(log.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(log[2]?.parts).toEqual([{ type: "tool-result", callId: "call-1", name: "weather", text: "12°C" }]);
    expect(
      nacreChatMessages({ messages: log, summary: null, problem: null })[1]?.parts.map((part) => part.type),
    ).toEqual(["step-start", "tool-weather", "step-start", "text"]);
  });
});
