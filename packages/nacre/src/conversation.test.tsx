import { ContextCapabilityMissingError } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { describe, expect, it, vi } from "vitest";
import { ConversationProvider, useContextUsage, useConversation } from "./conversation.js";
import { conversationStore } from "./conversation-cache.js";
import { NacreOutsideProviderError } from "./errors.js";
import { conversationQueryOptions } from "./query.js";

function wrapperFor(engine: ReturnType<typeof createMockEngine>, chatId = "c") {
  const client = new QueryClient();
  const wrapper = ({ children }: { children: ReactNode }) => (
    <ConversationProvider engine={engine} chatId={chatId} queryClient={client}>
      {children}
    </ConversationProvider>
  );
  return { client, wrapper };
}

// The conversation on every engine (sending, folding, streaming, compact, problems, abort) is in
// conversation.engines.test.tsx; here, what only the mock can script.
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

    it("should refuse a fold asked of its store with a ContextCapabilityMissingError", async () => {
      const engine = createMockEngine({ context: false, id: "plain" });
      const error = await conversationStore(new QueryClient(), engine, "c")
        .compact()
        .catch((caught: unknown) => caught);
      expect(ContextCapabilityMissingError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ engineId: "plain" });
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
      let thrown: unknown;
      try {
        renderHook(() => useConversation());
      } catch (error) {
        thrown = error;
      }
      expect(NacreOutsideProviderError.isInstance(thrown)).toBe(true);
      expect(thrown).toMatchObject({ used: "this hook" });
      vi.mocked(console.error).mockRestore();
    });
  });
});

describe("useContextUsage", () => {
  it("should be null when the engine cannot tell", async () => {
    const engine = createMockEngine({ context: false });
    const { wrapper } = wrapperFor(engine);
    const { result } = renderHook(() => ({ usage: useContextUsage(), conversation: useConversation() }), { wrapper });
    await waitFor(() => expect(result.current.conversation.isLoading).toBe(false));
    await waitFor(() => expect(result.current.usage).toBeNull());
  });
});
