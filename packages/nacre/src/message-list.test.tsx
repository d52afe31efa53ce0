import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { act, render, screen, within } from "@testing-library/react";
import { createRef } from "react";
import { describe, expect, it } from "vitest";
import { ConversationProvider } from "./conversation.js";
import { MessageListRoot } from "./message-list.js";

describe("MessageList", () => {
  describe("given a chat with tool results and HTML in the model's text", () => {
    it("should show every message as text, with roles", async () => {
      const engine = createMockEngine({
        chats: {
          c: {
            messages: [
              { seq: 0, role: "user", parts: [{ type: "text", text: "list files" }] },
              {
                seq: 1,
                role: "assistant",
                parts: [
                  { type: "text", text: "<script>alert(1)</script> Sure." },
                  { type: "tool-call", id: "t1", name: "ls", arguments: "{}" },
                ],
              },
              { seq: 2, role: "tool", parts: [{ type: "tool-result", callId: "t1", text: "a.txt\n  b.txt" }] },
            ],
          },
        },
      });
      render(
        <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
          <MessageListRoot />
        </ConversationProvider>,
      );
      const list = await screen.findByRole("region", { name: "Messages" });
      await within(list).findByText("<script>alert(1)</script> Sure.");
      expect(document.querySelector("script")).toBeNull();
      expect(within(list).getByText("Called ls")).toBeInTheDocument();
      expect(list.querySelector("pre")).toHaveTextContent("a.txt b.txt");
      expect([...list.querySelectorAll("[data-nacre-message]")].map((row) => row.getAttribute("data-role"))).toEqual([
        "user",
        "assistant",
        "tool",
      ]);
      expect(list).toHaveAttribute("tabindex", "0");
    });
  });

  describe("when a reply streams", () => {
    it("should show it being written, then as a message of the log, once", async () => {
      const engine = createMockEngine({ turns: { reply: "Streaming words arrive." }, chunkSize: 4, delayMs: 1 });
      render(
        <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
          <MessageListRoot />
        </ConversationProvider>,
      );
      await screen.findByRole("region");
      let done: Promise<unknown> = Promise.resolve();
      act(() => {
        done = engine.sendTurn({ chatId: "c", seq: 0, text: "go" }).done;
      });
      const streaming = await screen.findByText(/^Strea/);
      expect(streaming.closest("[data-streaming]")).toHaveAttribute("aria-busy", "true");
      await act(async () => {
        await done;
      });
      expect(await screen.findByText("Streaming words arrive.")).toBeInTheDocument();
      expect(document.querySelectorAll('[data-nacre-message][data-seq="1"]')).toHaveLength(1);
      expect(document.querySelector("[data-streaming]")).toBeNull();
    });
  });

  describe("given className and ref", () => {
    it("should pass them to the scrolling element", async () => {
      const ref = createRef<HTMLDivElement>();
      render(
        <ConversationProvider
          engine={createMockEngine({ chats: { c: { messages: chatLogFrom([["a", "b"]]) } } })}
          chatId="c"
          queryClient={new QueryClient()}
        >
          <MessageListRoot className="scroll" ref={ref} />
        </ConversationProvider>,
      );
      await screen.findByText("a");
      expect(ref.current).toHaveClass("scroll");
      expect(ref.current).toHaveAttribute("data-nacre-message-list");
    });
  });
});
