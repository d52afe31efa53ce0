import { BranchCapabilityMissingError, type EngineEvent } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { describe, expect, it } from "vitest";
import { ConversationProvider, useConversation } from "./conversation.js";
import { conversationStore } from "./conversation-cache.js";

function chatOfThreeTurns(options: { branches?: boolean } = {}) {
  return createMockEngine({
    ...options,
    turns: (input, call) => ({ reply: `answer ${call}: ${input.text}` }),
    chats: {
      c: {
        messages: chatLogFrom([
          ["one", "1"],
          ["two", "2"],
          ["three", "3"],
        ]),
      },
    },
  });
}

function wrapperFor(engine: ReturnType<typeof createMockEngine>, client = new QueryClient()) {
  return ({ children }: { children: ReactNode }) => (
    <ConversationProvider engine={engine} chatId="c" queryClient={client}>
      {children}
    </ConversationProvider>
  );
}

const seqs = (messages: readonly { seq: number }[]) => messages.map((message) => message.seq);
const texts = (messages: readonly { parts: readonly { type: string; text?: string }[] }[]) =>
  messages.map((message) => message.parts.map((part) => part.text ?? "").join(""));

describe("useConversation with branches", () => {
  it("should edit a message in place: the new version answered, the old one a sibling away", async () => {
    const engine = chatOfThreeTurns();
    const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine) });
    await waitFor(() => expect(result.current.isLoading).toBe(false));
    expect(result.current.messages.every((message) => message.siblings === undefined)).toBe(true);
    let end: Awaited<ReturnType<NonNullable<typeof result.current.edit>>> = null;
    await act(async () => {
      end = (await result.current.edit?.(2, "two, edited")) ?? null;
    });
    expect(end).toMatchObject({ status: "done" });
    await waitFor(() => expect(result.current.messages[2]?.siblings).toBeDefined());
    expect(seqs(result.current.messages)).toEqual([0, 1, 6, 7]);
    expect(texts(result.current.messages).slice(2)).toEqual(["two, edited", "answer 0: two, edited"]);
    expect(result.current.messages[2]?.siblings).toMatchObject({ index: 1, count: 2, seqs: [2, 6] });
    expect(engine.calls.at(-1)).toMatchObject({ seq: 6, parent: 1, text: "two, edited" });

    // The picker's previous: the first version's branch, whole, with its newest leaf.
    await act(async () => {
      await result.current.messages[2]?.siblings?.select(0);
    });
    await waitFor(() => expect(seqs(result.current.messages)).toEqual([0, 1, 2, 3, 4, 5]));
    expect(result.current.messages[2]?.siblings).toMatchObject({ index: 0, count: 2 });
  });

  it("should regenerate an answer: the branch cut there while the new one streams, then both versions", async () => {
    const engine = chatOfThreeTurns();
    const client = new QueryClient();
    const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine, client) });
    await waitFor(() => expect(result.current.isLoading).toBe(false));
    const cache = conversationStore(client, engine, "c").cache;
    const shownAtTurnStart: number[][] = [];
    engine.subscribe((event: EngineEvent) => {
      if (event.type === "message-start") shownAtTurnStart.push(seqs(cache.peek()?.messages ?? []));
    });
    await act(async () => {
      await result.current.regenerate?.(3);
    });
    expect(shownAtTurnStart).toEqual([[0, 1, 2]]);
    expect(engine.calls.at(-1)).toMatchObject({ seq: 2, retry: true, text: "two" });
    await waitFor(() => expect(result.current.messages[3]?.siblings).toMatchObject({ index: 1, count: 2 }));
    expect(seqs(result.current.messages)).toEqual([0, 1, 2, 6]);
    // The next message goes at the log's next place, after every branch.
    await act(async () => {
      await result.current.send("four");
    });
    expect(engine.calls.at(-1)).toMatchObject({ seq: 7, text: "four" });
    await waitFor(() => expect(seqs(result.current.messages)).toEqual([0, 1, 2, 6, 7, 8]));
  });

  it("should offer no edit or regenerate without the branches capability, and the store says why", async () => {
    const engine = chatOfThreeTurns({ branches: false });
    const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine) });
    await waitFor(() => expect(result.current.isLoading).toBe(false));
    expect(result.current.edit).toBeUndefined();
    expect(result.current.regenerate).toBeUndefined();
    const store = conversationStore(new QueryClient(), engine, "c");
    await expect(store.edit(2, "x")).rejects.toSatisfy(BranchCapabilityMissingError.isInstance);
    await expect(store.selectBranch(2)).rejects.toSatisfy(BranchCapabilityMissingError.isInstance);
  });
});
