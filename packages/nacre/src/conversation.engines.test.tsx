import type { Engine, EngineEvent } from "@conch/engine-client";
import { chatLogFrom } from "@conch/engine-client/mock";
import { type ContractTurn, type EngineSetup, enginesUnderTest } from "@conch/fake-provider";
import { QueryClient } from "@tanstack/react-query";
import { act, render, renderHook, screen, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConversationProvider, useContextUsage, useConversation, useStreamingMessage } from "./conversation.js";
import { conversationQueryKey } from "./query.js";

// Nacre's conversation, played on every engine: the mock the stories use, and the API engine over the fake
// provider (real HTTP). What only the mock can script (a seeded summary, no context capability) is in
// conversation.test.tsx.

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function wrapperFor(engine: Engine, chatId: string) {
  const client = new QueryClient();
  const wrapper = ({ children }: { children: ReactNode }) => (
    <ConversationProvider engine={engine} chatId={chatId} queryClient={client}>
      {children}
    </ConversationProvider>
  );
  return { client, wrapper };
}

function CountingList({ renders }: { renders: { list: number } }) {
  const conversation = useConversation();
  renders.list += 1;
  return (
    <>
      <p>{conversation.messages.length} messages</p>
      <button type="button" onClick={() => void conversation.send("hi")}>
        send
      </button>
    </>
  );
}

function CountingStreaming({ renders, texts }: { renders: { streaming: number }; texts: string[] }) {
  const streaming = useStreamingMessage();
  renders.streaming += 1;
  if (streaming) texts.push(streaming.text);
  return <p>{streaming?.text}</p>;
}

describe.each(enginesUnderTest)("useConversation on %s", (_name, makeEngine) => {
  async function make(turns: readonly ContractTurn[], setup?: EngineSetup) {
    const under = await makeEngine(turns, setup);
    if (under.close) closers.push(under.close);
    return under;
  }

  describe("when a message is sent", () => {
    it("should show it and the answer, end ready, and take the context usage from the turn's end", async () => {
      const { engine } = await make([{ reply: "Hello from the engine." }]);
      const { result } = renderHook(() => ({ conversation: useConversation(), usage: useContextUsage() }), {
        wrapper: wrapperFor(engine, "send").wrapper,
      });
      await waitFor(() => expect(result.current.conversation.isLoading).toBe(false));
      let end: Awaited<ReturnType<typeof result.current.conversation.send>> = null;
      await act(async () => {
        end = await result.current.conversation.send("Hi");
      });
      expect(end).toMatchObject({ type: "turn-end", status: "done" });
      await waitFor(() => expect(result.current.conversation.messages).toHaveLength(2));
      expect(result.current.conversation.messages[1]?.parts).toEqual([
        { type: "text", text: "Hello from the engine." },
      ]);
      expect(result.current.conversation.status).toBe("ready");
      await waitFor(() => expect(result.current.usage?.usedTokens ?? 0).toBeGreaterThan(0));
    });
  });

  describe("given another tab that wrote to the chat since this one read it", () => {
    it("should read the chat again and send the message at the right seq, through the turn", async () => {
      const { engine, another } = await make([{ reply: "From the other tab." }, { reply: "From this tab." }]);
      const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine, "tabs").wrapper });
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      expect(result.current.messages).toEqual([]);
      const otherTab = await another();
      expect((await otherTab.sendTurn({ chatId: "tabs", seq: 0, text: "Other" }).done).status).toBe("done");
      let end: Awaited<ReturnType<typeof result.current.send>> = null;
      await act(async () => {
        end = await result.current.send("Mine");
      });
      expect(end).toMatchObject({ type: "turn-end", seq: 2, status: "done" });
      await waitFor(() => expect(result.current.messages).toHaveLength(4));
      expect(result.current.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3]);
      expect(result.current.error).toBeNull();
    });
  });

  describe("when a message is sent and the engine folds before answering", () => {
    it("should go through compacting, update the summary from the compacted event and end ready", async () => {
      const { engine, longText } = await make([
        { reply: "One." },
        { reply: "Two." },
        { reply: "The answer.", fold: true },
      ]);
      const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine, "fold").wrapper });
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      const seen: EngineEvent[] = [];
      engine.subscribe((event) => seen.push(event));
      for (const _ of [1, 2]) {
        await act(async () => {
          await result.current.send(longText);
        });
      }
      expect(result.current.summary).toBeNull();
      let end: Awaited<ReturnType<typeof result.current.send>> = null;
      await act(async () => {
        end = await result.current.send(longText);
      });
      expect(end).toMatchObject({ type: "turn-end", status: "done", seq: 4 });
      await waitFor(() => expect(result.current.messages).toHaveLength(6));
      expect(result.current.summary).toMatchObject({ reason: "budget" });
      expect(result.current.summary?.text).not.toBe("");
      expect(result.current.firstKeptSeq).toBeGreaterThan(0);
      expect(result.current.status).toBe("ready");
      expect(seen.map((event) => event.type)).toContain("compacted");
      expect(result.current.messages.at(-1)?.parts).toEqual([{ type: "text", text: "The answer." }]);
    });
  });

  describe("when deltas stream", () => {
    it("should re-render the streaming reader per delta and the conversation reader only on changes of state", async () => {
      const reply = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(3);
      const { engine } = await make([{ reply }]);
      const renders = { list: 0, streaming: 0 };
      const texts: string[] = [];
      render(
        <>
          <CountingList renders={renders} />
          <CountingStreaming renders={renders} texts={texts} />
        </>,
        { wrapper: wrapperFor(engine, "deltas").wrapper },
      );
      await screen.findByText("0 messages");
      const listBefore = renders.list;
      await act(async () => {
        screen.getByRole("button", { name: "send" }).click();
        await vi.waitFor(() => expect(screen.getByText("2 messages")).toBeInTheDocument());
      });
      // The streaming reader saw the text grow piece by piece.
      expect(
        new Set(texts.filter((text) => text.length > 0 && text.length < reply.length)).size,
      ).toBeGreaterThanOrEqual(3);
      // The conversation reader re-rendered for status changes and new messages, far fewer times than deltas.
      expect(renders.list - listBefore).toBeLessThan(10);
      expect(renders.streaming).toBeGreaterThan(renders.list - listBefore);
    });
  });

  describe("when compact runs with what to keep", () => {
    it("should fold, put the new summary in the cache and have nothing left to fold", async () => {
      const log = chatLogFrom([
        ["a", "A"],
        ["b", "B"],
        ["c", "C"],
      ]);
      const { engine } = await make([], { chats: { c: log } });
      const { wrapper, client } = wrapperFor(engine, "c");
      const { result } = renderHook(() => useConversation(), { wrapper });
      await waitFor(() => expect(result.current.compactUnavailable).toBeNull());
      let status = "";
      await act(async () => {
        status = (await result.current.compact?.("the invoice numbers"))?.status ?? "";
      });
      expect(status).toBe("compacted");
      expect(result.current.firstKeptSeq).toBe(4);
      expect(result.current.summary?.text).not.toBe("");
      expect(result.current.compactUnavailable).toBe("all-folded");
      expect(client.getQueryData(conversationQueryKey(engine, "c"))).toMatchObject({ summary: { firstKeptSeq: 4 } });
    });
  });

  describe("when a turn ends with a problem after a quiet retry", () => {
    it("should show the problem with the person's words and the health note, newest first", async () => {
      const { engine } = await make([
        { reply: "First.", heal: true },
        { reply: "", problem: "too-long" },
        { reply: "Third." },
      ]);
      const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine, "problem").wrapper });
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      await act(async () => {
        await result.current.send("first");
      });
      await act(async () => {
        await result.current.send("second");
      });
      await waitFor(() => expect(result.current.problem).not.toBeNull());
      expect(result.current.problem).toMatchObject({ seq: 2, message: "second", problem: { kind: "too-long" } });
      expect(result.current.healthNotes.map((note) => note.kind)).toEqual(["healed"]);
      // The next turn clears it.
      await act(async () => {
        await result.current.send("third");
      });
      await waitFor(() => expect(result.current.problem).toBeNull());
    });
  });

  describe("when abort is called while a reply streams", () => {
    it("should end the turn as aborted and keep what was written", async () => {
      const { engine } = await make([{ reply: "a long reply ".repeat(200), slow: true }]);
      const { result } = renderHook(() => ({ conversation: useConversation(), streaming: useStreamingMessage() }), {
        wrapper: wrapperFor(engine, "abort").wrapper,
      });
      await waitFor(() => expect(result.current.conversation.isLoading).toBe(false));
      let sending: ReturnType<typeof result.current.conversation.send> | undefined;
      act(() => {
        sending = result.current.conversation.send("go");
      });
      await waitFor(() => expect(result.current.streaming?.text.length ?? 0).toBeGreaterThan(3));
      expect(result.current.conversation.status).toBe("streaming");
      act(() => result.current.conversation.abort());
      const end = await act(async () => sending);
      expect(end).toMatchObject({ status: "aborted" });
      await waitFor(() => expect(result.current.conversation.messages).toHaveLength(2));
      expect(result.current.conversation.status).toBe("ready");
    });
  });

  describe("when a turn ends while the chat is still loading", () => {
    it("should read the chat again once the load lands, so the turn is not lost", async () => {
      const { engine } = await make([{ reply: "Hello." }]);
      const load = engine.loadChat.bind(engine);
      let loads = 0;
      let turnEnded = () => {};
      const afterTurn = new Promise<void>((resolve) => {
        turnEnded = resolve;
      });
      // The first snapshot is read at once and arrives only after the turn below (not after a fixed delay, which
      // a loaded machine outran): the turn happens in between.
      engine.loadChat = async (chatId, options) => {
        loads += 1;
        const snapshot = await load(chatId, options);
        if (loads === 1) await afterTurn;
        return snapshot;
      };
      const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine, "late").wrapper });
      await act(async () => {
        await engine.sendTurn({ chatId: "late", seq: 0, text: "hi" }).done;
      });
      expect(result.current.isLoading).toBe(true);
      turnEnded();
      await waitFor(() => expect(result.current.messages).toHaveLength(2));
      // Once for the first load and once again after it, however many events came meanwhile.
      expect(loads).toBe(2);
    });
  });

  describe("useContextUsage", () => {
    it("should read the engine's count and refresh it after a turn", async () => {
      const { engine } = await make([{ reply: "word ".repeat(1000) }]);
      const { result } = renderHook(() => ({ usage: useContextUsage(), conversation: useConversation() }), {
        wrapper: wrapperFor(engine, "usage").wrapper,
      });
      await waitFor(() => expect(result.current.usage).not.toBeNull());
      const before = result.current.usage?.usedTokens ?? 0;
      expect(result.current.usage).toMatchObject({ level: "low" });
      await act(async () => {
        await result.current.conversation.send("hello");
      });
      await waitFor(() => expect(result.current.usage?.usedTokens ?? 0).toBeGreaterThan(before + 500));
    });
  });
});
