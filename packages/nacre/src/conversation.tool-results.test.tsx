import type { ChatMessage } from "@conch/engine-client";
import { createMockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { describe, expect, it } from "vitest";
import { ConversationProvider, useConversation } from "./conversation.js";

/** A chat whose last message is the model calling a tool, waiting for the host's result. */
const toolRound: ChatMessage[] = [
  { seq: 0, role: "user", parts: [{ type: "text", text: "What is the weather in Oslo?" }], createdAt: 0 },
  {
    seq: 1,
    role: "assistant",
    parts: [{ type: "tool-call", id: "call-1", name: "weather", arguments: '{"city":"Oslo"}' }],
    createdAt: 0,
  },
];

function wrapperFor(engine: ReturnType<typeof createMockEngine>) {
  const client = new QueryClient();
  return ({ children }: { children: ReactNode }) => (
    <ConversationProvider engine={engine} chatId="c" queryClient={client}>
      {children}
    </ConversationProvider>
  );
}

describe("useConversation().sendToolResults", () => {
  describe("given the model called a tool", () => {
    it("should hand the results to the engine at the log's next seq, and the same turn goes on", async () => {
      const engine = createMockEngine({ chats: { c: { messages: toolRound } }, turns: { reply: "It is 4 °C." } });
      const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine) });
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      let end: Awaited<ReturnType<typeof result.current.sendToolResults>> = null;
      await act(async () => {
        end = await result.current.sendToolResults([
          { type: "tool-result", callId: "call-1", name: "weather", text: "4 °C, rain" },
        ]);
      });
      expect(end).toMatchObject({ type: "turn-end", status: "done" });
      expect(engine.calls).toHaveLength(1);
      expect(engine.calls[0]).toMatchObject({
        chatId: "c",
        seq: 2,
        text: "",
        toolResults: [{ type: "tool-result", callId: "call-1", text: "4 °C, rain" }],
      });
      await waitFor(() => expect(result.current.messages).toHaveLength(4));
      expect(result.current.messages[2]).toMatchObject({
        seq: 2,
        role: "tool",
        parts: [{ type: "tool-result", callId: "call-1" }],
      });
      expect(result.current.messages[3]?.parts).toEqual([{ type: "text", text: "It is 4 °C." }]);
    });
  });

  describe("when a turn already runs", () => {
    it("should be busy like send: no second turn starts, and the status says so", async () => {
      const engine = createMockEngine({ chats: { c: { messages: toolRound } }, turns: { reply: "Done.", delayMs: 5 } });
      const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine) });
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      let first: ReturnType<typeof result.current.sendToolResults> = Promise.resolve(null);
      act(() => {
        first = result.current.sendToolResults([{ type: "tool-result", callId: "call-1", text: "ok" }]);
      });
      await waitFor(() => expect(result.current.canSend).toBe(false));
      expect(result.current.status).not.toBe("ready");
      let second: Awaited<ReturnType<typeof result.current.send>> | "unset" = "unset";
      let again: Awaited<ReturnType<typeof result.current.send>> | "unset" = "unset";
      await act(async () => {
        second = await result.current.send("meanwhile");
        again = await result.current.sendToolResults([{ type: "tool-result", callId: "call-1", text: "x" }]);
        await first;
      });
      expect(again).toBeNull();
      expect(second).toBeNull();
      expect(engine.calls).toHaveLength(1);
      await waitFor(() => expect(result.current.status).toBe("ready"));
    });
  });

  describe("given no results", () => {
    it("should start no turn", async () => {
      const engine = createMockEngine({ chats: { c: { messages: toolRound } } });
      const { result } = renderHook(() => useConversation(), { wrapper: wrapperFor(engine) });
      await waitFor(() => expect(result.current.isLoading).toBe(false));
      await expect(result.current.sendToolResults([])).resolves.toBeNull();
      expect(engine.calls).toHaveLength(0);
    });
  });
});
