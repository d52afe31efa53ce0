import type { Engine } from "@conch/engine-client";
import { apiEngineUnderTest, type MakeEngine, mockEngineUnderTest } from "@conch/fake-provider";
import { QueryClient } from "@tanstack/react-query";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it } from "vitest";
import { ConversationProvider, useContextUsage, useConversation } from "./conversation.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function wrapperFor(engine: Engine, chatId: string) {
  const client = new QueryClient();
  return ({ children }: { children: ReactNode }) => (
    <ConversationProvider engine={engine} chatId={chatId} queryClient={client}>
      {children}
    </ConversationProvider>
  );
}

const engines: Array<[string, MakeEngine]> = [
  ["the mock engine", mockEngineUnderTest],
  ["the API engine over the fake provider", apiEngineUnderTest],
];

describe.each(engines)("useConversation on %s", (_name, makeEngine) => {
  async function make(...replies: string[]) {
    const under = await makeEngine(replies.map((reply) => ({ reply })));
    if (under.close) closers.push(under.close);
    return under;
  }

  describe("when a message is sent", () => {
    it("should show it and the answer, end ready, and take the context usage from the turn's end", async () => {
      const { engine } = await make("Hello from the engine.");
      const { result } = renderHook(() => ({ conversation: useConversation(), usage: useContextUsage() }), {
        wrapper: wrapperFor(engine, "send"),
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
      const { engine, another } = await make("From the other tab.", "From this tab.");
      const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine, "tabs") });
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
});
