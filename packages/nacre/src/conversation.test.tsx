import type { EngineEvent } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, render, renderHook, screen, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { describe, expect, it, vi } from "vitest";
import { ConversationProvider, useContextUsage, useConversation, useStreamingMessage } from "./conversation.js";
import { conversationQueryKey, conversationQueryOptions } from "./query.js";

function wrapperFor(engine: ReturnType<typeof createMockEngine>, chatId = "c") {
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

describe("useConversation", () => {
  describe("given a chat seeded with a summary", () => {
    it("should show every message, the summary and where the model's memory starts", async () => {
      const engine = createMockEngine({
        chats: {
          c: {
            messages: chatLogFrom([
              ["one", "1"],
              ["two", "2"],
              ["three", "3"],
            ]),
            summary: {
              text: "Earlier: one and two.",
              model: "mock-small",
              firstKeptSeq: 4,
              reason: "budget",
              before: { messages: 6, tokens: 300 },
              after: { messages: 2, tokens: 80 },
              at: 0,
            },
          },
        },
      });
      const { wrapper } = wrapperFor(engine);
      const { result } = renderHook(() => useConversation(), { wrapper });
      expect(result.current.isLoading).toBe(true);
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      expect(result.current.messages).toHaveLength(6);
      expect(result.current.firstKeptSeq).toBe(4);
      expect(result.current.foldedMessages).toBe(4);
      expect(result.current.summary?.text).toBe("Earlier: one and two.");
      expect(result.current.model?.displayName).toBe("Mock Large");
      expect(result.current.status).toBe("ready");
    });
  });

  describe("when a message is sent and the engine folds before answering", () => {
    it("should go through compacting and streaming, update the summary from the compacted event and end ready", async () => {
      const engine = createMockEngine({
        chats: {
          c: {
            messages: chatLogFrom([
              ["a", "A"],
              ["b", "B"],
            ]),
          },
        },
        turns: { reply: "The answer.", compaction: { summary: "Folded a.", keepTurns: 2 } },
      });
      const { wrapper } = wrapperFor(engine);
      const { result } = renderHook(() => useConversation(), { wrapper });
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      const statuses = new Set<string>();
      const seen: EngineEvent[] = [];
      engine.subscribe((event) => seen.push(event));
      let end: Awaited<ReturnType<typeof result.current.send>> = null;
      await act(async () => {
        const sending = result.current.send("c");
        statuses.add(result.current.status);
        end = await sending;
      });
      expect(end).toMatchObject({ type: "turn-end", status: "done", seq: 4 });
      await waitFor(() => expect(result.current.messages).toHaveLength(6));
      expect(result.current.summary).toMatchObject({ text: "Folded a.", firstKeptSeq: 2, reason: "budget" });
      expect(result.current.status).toBe("ready");
      expect(seen.map((event) => event.type)).toContain("compacted");
      expect(result.current.messages.at(-1)?.parts).toEqual([{ type: "text", text: "The answer." }]);
    });
  });

  describe("when deltas stream", () => {
    it("should re-render the streaming reader per delta and the conversation reader only on changes of state", async () => {
      const engine = createMockEngine({ turns: { reply: "abcdefghijklmnopqrstuvwxyz0123456789" }, chunkSize: 3 });
      const { wrapper } = wrapperFor(engine);
      const renders = { list: 0, streaming: 0 };
      const texts: string[] = [];
      render(
        <>
          <CountingList renders={renders} />
          <CountingStreaming renders={renders} texts={texts} />
        </>,
        { wrapper },
      );
      await screen.findByText("0 messages");
      const listBefore = renders.list;
      await act(async () => {
        screen.getByRole("button", { name: "send" }).click();
        await vi.waitFor(() => expect(screen.getByText("2 messages")).toBeInTheDocument());
      });
      // 12 deltas of 3 characters: the streaming reader saw the text grow piece by piece.
      expect(texts.filter((text) => text.length > 0 && text.length < 36).length).toBeGreaterThanOrEqual(6);
      // The conversation reader re-rendered for status changes and new messages, far fewer times than deltas.
      expect(renders.list - listBefore).toBeLessThan(10);
      expect(renders.streaming).toBeGreaterThan(renders.list - listBefore);
    });
  });

  describe("given an engine without the context capability", () => {
    it("should leave compact out and say why a fold cannot run", async () => {
      const engine = createMockEngine({ context: false });
      const { wrapper } = wrapperFor(engine);
      const { result } = renderHook(() => useConversation(), { wrapper });
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      expect(result.current.compact).toBeUndefined();
      expect("compact" in result.current).toBe(false);
      expect(result.current.compactUnavailable).toBe("no-context");
    });
  });

  describe("when compact runs with what to keep", () => {
    it("should hand keep to the engine, put the new summary in the cache and have nothing left to fold", async () => {
      const engine = createMockEngine({
        chats: {
          c: {
            messages: chatLogFrom([
              ["a", "A"],
              ["b", "B"],
              ["c", "C"],
            ]),
          },
        },
      });
      const { wrapper, client } = wrapperFor(engine);
      const { result } = renderHook(() => useConversation(), { wrapper });
      await waitFor(() => expect(result.current.compactUnavailable).toBeNull());
      let status = "";
      await act(async () => {
        status = (await result.current.compact?.("the invoice numbers"))?.status ?? "";
      });
      expect(status).toBe("compacted");
      expect(engine.compactCalls).toEqual([{ chatId: "c", keep: "the invoice numbers" }]);
      expect(result.current.firstKeptSeq).toBe(4);
      expect(result.current.summary?.text).toContain("the invoice numbers");
      expect(result.current.compactUnavailable).toBe("all-folded");
      expect(client.getQueryData(conversationQueryKey(engine, "c"))).toMatchObject({ summary: { firstKeptSeq: 4 } });
    });
  });

  describe("when a turn ends with a problem after a quiet retry", () => {
    it("should show the problem with the person's words and the health note, newest first", async () => {
      const engine = createMockEngine({
        turns: [
          { healed: { provider: "openai", window: 8192 } },
          { problem: { kind: "too-long", title: "Too long", next: { type: "new-chat", message: "second" } } },
        ],
      });
      const { wrapper } = wrapperFor(engine);
      const { result } = renderHook(() => useConversation(), { wrapper });
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
      const engine = createMockEngine({ turns: { reply: "a long reply ".repeat(200) }, chunkSize: 2, delayMs: 2 });
      const { wrapper } = wrapperFor(engine);
      const { result } = renderHook(() => ({ conversation: useConversation(), streaming: useStreamingMessage() }), {
        wrapper,
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
      const engine = createMockEngine({ turns: { reply: "Hello." } });
      const load = engine.loadChat.bind(engine);
      let loads = 0;
      // The snapshot is read at once and arrives late: the turn below happens in between.
      engine.loadChat = async (chatId, options) => {
        loads += 1;
        const snapshot = await load(chatId, options);
        await new Promise((resolve) => setTimeout(resolve, 50));
        return snapshot;
      };
      const { wrapper } = wrapperFor(engine);
      const { result } = renderHook(() => useConversation(), { wrapper });
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 0, text: "hi" }).done;
      });
      expect(result.current.isLoading).toBe(true);
      await waitFor(() => expect(result.current.messages).toHaveLength(2));
      // Once for the first load and once again after it, however many events came meanwhile.
      expect(loads).toBe(2);
    });
  });

  describe("given no provider", () => {
    it("should work from an engine and chat id under the app's own QueryClientProvider", async () => {
      const engine = createMockEngine({ chats: { mine: { messages: chatLogFrom([["hello", "hi"]]) } } });
      const client = new QueryClient();
      await client.prefetchQuery(conversationQueryOptions(engine, "mine"));
      const { result } = renderHook(() => useConversation({ engine, chatId: "mine" }), {
        wrapper: ({ children }) => <QueryClientProvider client={client}>{children}</QueryClientProvider>,
      });
      // Prefetched: no loading state at all.
      expect(result.current.isLoading).toBe(false);
      expect(result.current.messages).toHaveLength(2);
    });

    it("should say what is missing when there is neither provider nor engine", () => {
      vi.spyOn(console, "error").mockImplementation(() => {});
      expect(() => renderHook(() => useConversation())).toThrow(/inside <ConversationProvider>/);
      vi.mocked(console.error).mockRestore();
    });
  });
});

describe("useContextUsage", () => {
  it("should read the engine's count and refresh it after a turn", async () => {
    const engine = createMockEngine({ turns: { reply: "x".repeat(4000) } });
    const { wrapper } = wrapperFor(engine);
    const { result } = renderHook(() => ({ usage: useContextUsage(), conversation: useConversation() }), { wrapper });
    await waitFor(() => expect(result.current.usage).not.toBeNull());
    const before = result.current.usage?.usedTokens ?? 0;
    expect(result.current.usage).toMatchObject({ window: 32_000, level: "low" });
    await act(async () => {
      await result.current.conversation.send("hello");
    });
    await waitFor(() => expect(result.current.usage?.usedTokens ?? 0).toBeGreaterThan(before + 900));
  });

  it("should be null when the engine cannot tell", async () => {
    const engine = createMockEngine({ context: false });
    const { wrapper } = wrapperFor(engine);
    const { result } = renderHook(() => ({ usage: useContextUsage(), conversation: useConversation() }), { wrapper });
    await waitFor(() => expect(result.current.conversation.isLoading).toBe(false));
    await waitFor(() => expect(result.current.usage).toBeNull());
  });
});
