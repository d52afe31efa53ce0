import { type ChatMessage, createMemoryChatStore } from "@conch/engine-client";
import type { ChatDirectory } from "@conch/engine-client/remote";
import { ChatList, NewChatGreeting, useChats } from "@conch/nacre/chats";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { useState } from "react";
import { expect, userEvent, waitFor, within } from "storybook/test";
import { Conversation } from "./support.js";

const firstWords = [
  "Plan the trip to Lisbon: three days, trams and tiles",
  "Why does the invoice export skip the VAT column?",
  "A long question about the release checklist that goes on well past what the side panel shows at once",
];

/** A memory store holding a chat for each of `firstWords`, the last one newest. */
async function directoryWith(words: readonly string[]): Promise<ChatDirectory> {
  const store = createMemoryChatStore();
  for (const [index, text] of words.entries()) {
    const message: ChatMessage = { seq: 0, role: "user", parts: [{ type: "text", text }] };
    await store.appendLog(`chat-${index}`, [message]);
    // The next chat a later time than this one's, so the order is known.
    const after = Date.now();
    while (Date.now() <= after) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return store.directory as ChatDirectory;
}

/** The list over its own memory store, made once per mounted story. */
function Chats({ words, current }: { words: readonly string[]; current?: string }) {
  const [directory] = useState(() => {
    let made: ChatDirectory | null = null;
    const ready = directoryWith(words).then((directory) => {
      made = directory;
    });
    // Every call waits for the chats to be written first.
    const after =
      <A extends unknown[], R>(call: (directory: ChatDirectory, ...args: A) => Promise<R>) =>
      async (...args: A) => {
        await ready;
        return call(made as ChatDirectory, ...args);
      };
    return {
      list: after((directory, page: { offset: number; limit: number }) => directory.list(page)),
      rename: after((directory, chatId: string, title: string) => directory.rename(chatId, title)),
      remove: after((directory, chatId: string) => directory.remove(chatId)),
    } satisfies ChatDirectory;
  });
  const chats = useChats({ directory, ...(current !== undefined ? { defaultCurrent: current } : {}) });
  return <ChatList.Root chats={chats} />;
}

const meta = {
  title: "Nacre/ChatList",
  component: Chats,
  args: { words: firstWords, current: "chat-1" },
  decorators: [(Story) => <div style={{ maxWidth: 280 }}>{Story()}</div>],
} satisfies Meta<typeof Chats>;
export default meta;
type Story = StoryObj<typeof meta>;

export const NewestFirst: Story = {
  play: async ({ canvasElement }) => {
    const nav = within(canvasElement).getByRole("navigation", { name: "Chats" });
    await waitFor(() => expect(within(nav).getAllByRole("listitem")).toHaveLength(3));
    const current = within(nav).getByRole("button", { current: "page" });
    await expect(current).toHaveTextContent(firstWords[1] as string);
  },
};

export const ByKeyboard: Story = {
  play: async ({ canvasElement }) => {
    const nav = within(canvasElement).getByRole("navigation", { name: "Chats" });
    await waitFor(() => expect(within(nav).getAllByRole("listitem")).toHaveLength(3));
    const current = within(nav).getByRole("button", { current: "page" });
    current.focus();
    await waitFor(() => expect(current).toHaveFocus());
    await userEvent.keyboard("{Home}");
    await expect(within(nav).getByRole("button", { name: /^A long question/ })).toHaveFocus();
    await userEvent.keyboard("{F2}");
    await expect(within(nav).getByRole("textbox")).toHaveFocus();
    await userEvent.keyboard("{Escape}{Delete}");
    await expect(within(nav).getByRole("button", { name: "Keep" })).toHaveFocus();
  },
};

export const Renaming: Story = {
  play: async ({ canvasElement }) => {
    const nav = within(canvasElement).getByRole("navigation", { name: "Chats" });
    await userEvent.click(await within(nav).findByRole("button", { name: `Rename “${firstWords[0]}”` }));
    await expect(within(nav).getByRole("textbox", { name: `Title of “${firstWords[0]}”` })).toHaveFocus();
  },
};

export const ConfirmingRemoval: Story = {
  play: async ({ canvasElement }) => {
    const nav = within(canvasElement).getByRole("navigation", { name: "Chats" });
    await userEvent.click(await within(nav).findByRole("button", { name: `Delete “${firstWords[1]}”` }));
    await expect(within(nav).getByRole("group", { name: `Delete “${firstWords[1]}”?` })).toBeVisible();
  },
};

export const WithANewChat: Story = {
  play: async ({ canvasElement }) => {
    const nav = within(canvasElement).getByRole("navigation", { name: "Chats" });
    await waitFor(() => expect(within(nav).getAllByRole("listitem")).toHaveLength(3));
    await userEvent.click(within(nav).getByRole("button", { name: "New chat" }));
    await expect(within(nav).getByRole("button", { current: "page" })).toHaveTextContent("New chat");
  },
};

export const Empty: Story = {
  args: { words: [] },
  play: async ({ canvasElement }) => {
    // The open chat is a new one: listed, with the list's New chat button above it.
    const nav = within(canvasElement).getByRole("navigation", { name: "Chats" });
    await waitFor(() => expect(within(nav).getAllByRole("listitem")).toHaveLength(1));
  },
};

export const Dark: Story = {
  decorators: [
    (Story) => (
      <div data-nacre-theme="dark" style={{ padding: 16, maxWidth: 280, background: "var(--nacre-bg)" }}>
        {Story()}
      </div>
    ),
  ],
  play: NewestFirst.play,
};

/** A new chat's empty state, with the host's greeting in its slot. */
export const Greeting: StoryObj<typeof NewChatGreeting> = {
  render: () => (
    <Conversation script={{}}>
      <NewChatGreeting>
        <p>Ask anything: the chat takes its title from your first message.</p>
      </NewChatGreeting>
    </Conversation>
  ),
  play: async ({ canvasElement }) => {
    await expect(await within(canvasElement).findByText(/Ask anything/)).toBeVisible();
  },
};
