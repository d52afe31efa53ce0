import { type ChatMessage, type ChatStore, createMemoryChatStore, type EngineEvent } from "@conch/engine-client";
import type { ChatDirectory } from "@conch/engine-client/remote";
import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { createRef, type Ref } from "react";
import { describe, expect, it, vi } from "vitest";
import { ChatList, type UseChatsOptions, type UseChatsResult, useChats } from "./index.js";

const said = (text: string): ChatMessage[] => [{ seq: 0, role: "user", parts: [{ type: "text", text }] }];

/** A memory store holding chats written one after another, the last one newest. */
async function storeWith(...chats: [string, string][]): Promise<ChatStore & { directory: ChatDirectory }> {
  const store = createMemoryChatStore();
  for (const [id, text] of chats) {
    await store.appendLog(id, said(text));
    // The next chat a later time than this one's, so the order is known.
    const after = Date.now();
    while (Date.now() <= after) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return store as ChatStore & { directory: ChatDirectory };
}

/** An engine's `subscribe`, driven by the test: the hook reads only its events. */
function eventSource() {
  const listeners = new Set<(event: EngineEvent) => void>();
  return {
    subscribe(listener: (event: EngineEvent) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    send(event: EngineEvent) {
      for (const listener of listeners) listener(event);
    },
  };
}

function Chats(props: UseChatsOptions & { onResult?: (result: UseChatsResult) => void }) {
  const { onResult, ...options } = props;
  const chats = useChats(options);
  onResult?.(chats);
  return <ChatList.Root chats={chats} />;
}

const titles = () => screen.getAllByRole("listitem").map((item) => within(item).getAllByRole("button")[0]?.textContent);

describe("useChats and ChatList", () => {
  describe("given a directory with chats", () => {
    it("should list them newest first in a nav named Chats, the open one aria-current, with one Tab stop", async () => {
      const store = await storeWith(["trip", "Plan the trip"], ["soup", "A soup recipe"]);
      render(<Chats directory={store.directory} defaultCurrent="trip" />);
      const nav = await screen.findByRole("navigation", { name: "Chats" });
      expect(nav).toHaveAttribute("data-nacre-chat-list", "");
      await waitFor(() => expect(titles()).toEqual(["A soup recipe", "Plan the trip"]));
      const current = screen.getByRole("button", { current: "page" });
      expect(current).toHaveTextContent("Plan the trip");
      expect(current.closest("[data-nacre-chat-list-item]")).toHaveAttribute("data-current", "");
      expect(
        screen
          .getAllByRole("button")
          .filter((button) => button.tabIndex === 0)
          .map((b) => b.textContent),
      ).toEqual(["New chat", "Plan the trip"]);
    });

    it("should move between chats with the arrow keys, Home and End, and open one with Enter", async () => {
      const store = await storeWith(["a", "first"], ["b", "second"], ["c", "third"]);
      const onCurrentChange = vi.fn();
      render(<Chats directory={store.directory} defaultCurrent="c" onCurrentChange={onCurrentChange} />);
      await waitFor(() => expect(titles()).toEqual(["third", "second", "first"]));
      const user = userEvent.setup();
      await user.click(screen.getByRole("button", { name: "third" }));
      await user.keyboard("{ArrowDown}");
      expect(screen.getByRole("button", { name: "second" })).toHaveFocus();
      await user.keyboard("{End}");
      expect(screen.getByRole("button", { name: "first" })).toHaveFocus();
      await user.keyboard("{ArrowUp}{Home}");
      expect(screen.getByRole("button", { name: "third" })).toHaveFocus();
      await user.keyboard("{ArrowDown}{Enter}");
      expect(onCurrentChange).toHaveBeenLastCalledWith("b");
      expect(screen.getByRole("button", { name: "second" })).toHaveAttribute("aria-current", "page");
    });

    it("should rename a chat with F2 (Enter keeps, Escape drops) and store the title", async () => {
      const store = await storeWith(["trip", "Plan the trip"]);
      render(<Chats directory={store.directory} defaultCurrent="trip" />);
      const user = userEvent.setup();
      await user.click(await screen.findByRole("button", { name: "Plan the trip" }));
      await user.keyboard("{F2}");
      const box = screen.getByRole("textbox", { name: "Title of “Plan the trip”" });
      expect(box).toHaveFocus();
      await user.keyboard("Not kept{Escape}");
      expect(screen.getByRole("button", { name: "Plan the trip" })).toHaveFocus();
      await user.click(screen.getByRole("button", { name: "Rename “Plan the trip”" }));
      await user.clear(screen.getByRole("textbox"));
      await user.keyboard("Lisbon, three days{Enter}");
      await waitFor(() => expect(titles()).toEqual(["Lisbon, three days"]));
      expect((await store.directory.list({ offset: 0, limit: 5 })).chats[0]?.title).toBe("Lisbon, three days");
      expect(screen.getByRole("button", { name: "Lisbon, three days" })).toHaveFocus();
    });

    it("should ask before removing a chat (Keep is focused), remove it whole, and open the next one", async () => {
      const store = await storeWith(["old", "the old chat"], ["new", "the new chat"]);
      const onCurrentChange = vi.fn();
      render(<Chats directory={store.directory} defaultCurrent="new" onCurrentChange={onCurrentChange} />);
      const user = userEvent.setup();
      await user.click(await screen.findByRole("button", { name: "the new chat" }));
      await user.keyboard("{Delete}");
      const question = screen.getByRole("group", { name: "Delete “the new chat”?" });
      expect(within(question).getByRole("button", { name: "Keep" })).toHaveFocus();
      await user.keyboard("{Escape}");
      expect(titles()).toEqual(["the new chat", "the old chat"]);
      await user.click(screen.getByRole("button", { name: "Delete “the new chat”" }));
      await user.click(screen.getByRole("button", { name: "Delete" }));
      await waitFor(() => expect(titles()).toEqual(["the old chat"]));
      expect(onCurrentChange).toHaveBeenLastCalledWith("old");
      // The focus stays in the list, on the chat that was beside it.
      expect(screen.getByRole("button", { name: "the old chat" })).toHaveFocus();
      expect(await store.readLog("new")).toEqual([]);
    });
  });

  describe("given a new chat", () => {
    it("should list it at once as New chat and open it, then take its title from its first message", async () => {
      const store = await storeWith(["trip", "Plan the trip"]);
      const engine = eventSource();
      let result: UseChatsResult | undefined;
      render(
        <Chats
          directory={store.directory}
          engine={engine}
          defaultCurrent="trip"
          newChatId={() => "fresh"}
          onResult={(chats) => {
            result = chats;
          }}
        />,
      );
      const user = userEvent.setup();
      await user.click(await screen.findByRole("button", { name: "New chat" }));
      expect(titles()).toEqual(["New chat", "Plan the trip"]);
      expect(screen.getAllByRole("listitem")[0]).toHaveAttribute("data-new", "");
      expect(result?.current).toBe("fresh");
      expect(screen.getByRole("button", { current: "page" })).toHaveTextContent("New chat");

      await store.appendLog("fresh", said("How do I bake bread?\nWith rye."));
      act(() => engine.send({ type: "turn-start", chatId: "fresh", message: said("How do I bake bread?")[0]! }));
      await waitFor(() => expect(titles()).toEqual(["How do I bake bread?", "Plan the trip"]));
      expect(screen.getAllByRole("listitem")[0]).not.toHaveAttribute("data-new");
    });

    it("should keep a title given before the first message, and store it once the chat is written", async () => {
      const store = await storeWith();
      const engine = eventSource();
      render(<Chats directory={store.directory} engine={engine} defaultCurrent="draft" />);
      const user = userEvent.setup();
      await user.click(await screen.findByRole("button", { name: "Rename “New chat”" }));
      await user.clear(screen.getByRole("textbox"));
      await user.keyboard("Bread{Enter}");
      expect(titles()).toEqual(["Bread"]);
      await store.appendLog("draft", said("How do I bake bread?"));
      act(() => engine.send({ type: "turn-end", chatId: "draft", status: "done" } as EngineEvent));
      await waitFor(async () =>
        expect((await store.directory.list({ offset: 0, limit: 1 })).chats[0]?.title).toBe("Bread"),
      );
    });
  });

  describe("given more chats than a page", () => {
    it("should list a page, then the next with More chats, each chat once", async () => {
      const store = await storeWith(["c1", "one"], ["c2", "two"], ["c3", "three"]);
      render(<Chats directory={store.directory} defaultCurrent="c3" pageSize={2} />);
      await waitFor(() => expect(titles()).toEqual(["three", "two"]));
      await userEvent.setup().click(screen.getByRole("button", { name: "More chats" }));
      await waitFor(() => expect(titles()).toEqual(["three", "two", "one"]));
      expect(screen.queryByRole("button", { name: "More chats" })).toBeNull();
    });
  });

  describe("given a directory that fails", () => {
    it("should say so with data-status failed, and keep a refused removal's chat listed with the error", async () => {
      const failing: ChatDirectory = {
        list: async () => {
          throw new Error("offline");
        },
        rename: async () => false,
        remove: async () => false,
      };
      let result: UseChatsResult | undefined;
      render(
        <Chats
          directory={failing}
          onResult={(chats) => {
            result = chats;
          }}
        />,
      );
      await waitFor(() => expect(screen.getByRole("navigation")).toHaveAttribute("data-status", "failed"));
      expect(result?.error).toEqual(new Error("offline"));

      const store = await storeWith(["kept", "keep me"]);
      const refusing: ChatDirectory = {
        ...store.directory,
        remove: async () => {
          throw new Error("busy");
        },
      };
      render(
        <Chats
          directory={refusing}
          defaultCurrent="kept"
          onResult={(chats) => {
            result = chats;
          }}
        />,
      );
      await waitFor(() => expect(result?.chats.map((chat) => chat.title)).toEqual(["keep me"]));
      await act(() => result?.remove("kept") as Promise<void>);
      expect(result?.chats.map((chat) => chat.title)).toContain("keep me");
      expect(result?.error).toEqual(new Error("busy"));
    });
  });

  it("should pass props and ref through to the root, and render asChild", async () => {
    const store = await storeWith();
    const ref = createRef<HTMLElement>();
    render(<AsideHost directory={store.directory} rootRef={ref} />);
    expect(ref.current?.tagName).toBe("ASIDE");
    expect(ref.current).toHaveClass("side");
    expect(screen.getByRole("complementary", { name: "Your chats" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Start" })).toHaveAttribute("data-nacre-new-chat", "");
  });
});

function AsideHost({ directory, rootRef }: { directory: ChatDirectory; rootRef: Ref<HTMLElement> }) {
  const chats = useChats({ directory, defaultCurrent: "x" });
  return (
    <ChatList.Root chats={chats} ref={rootRef} className="side" aria-label="Your chats" asChild>
      <aside>
        <ChatList.NewChat>Start</ChatList.NewChat>
      </aside>
    </ChatList.Root>
  );
}
