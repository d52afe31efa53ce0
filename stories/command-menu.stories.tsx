import { chatLogFrom } from "@conch/engine-client/mock";
import { Command, CommandMenu, CompactCommandItem } from "@conch/nacre/command";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, fn, screen, userEvent, waitFor, within } from "storybook/test";
import { Conversation, threeTurns } from "./support.js";

const meta = {
  title: "Nacre/CommandMenu",
  component: CommandMenu,
  args: { onOpenChange: fn() },
} satisfies Meta<typeof CommandMenu>;
export default meta;
type Story = StoryObj<typeof meta>;

export const Enabled: Story = {
  args: { defaultOpen: true },
  render: (args) => (
    <Conversation script={{ chats: { c: { messages: threeTurns } } }}>
      <CommandMenu {...args} />
    </Conversation>
  ),
  play: async () => {
    const dialog = await screen.findByRole("dialog", { name: "Command menu" });
    const option = within(dialog).getByRole("option", { name: "Summarise the start of this chat" });
    await waitFor(() => expect(option).toHaveAttribute("aria-disabled", "false"));
    await expect(within(dialog).getByRole("combobox")).toHaveFocus();
  },
};

export const RunsTheFold: Story = {
  args: { defaultOpen: true },
  render: (args) => (
    <Conversation script={{ chats: { c: { messages: threeTurns } } }}>
      <CommandMenu {...args} />
    </Conversation>
  ),
  play: async ({ args }) => {
    const dialog = await screen.findByRole("dialog");
    const option = within(dialog).getByRole("option", { name: "Summarise the start of this chat" });
    await waitFor(() => expect(option).toHaveAttribute("aria-disabled", "false"));
    await userEvent.type(within(dialog).getByRole("combobox"), "compact");
    await userEvent.keyboard("{Enter}");
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    await expect(args.onOpenChange).toHaveBeenLastCalledWith(false);
  },
};

export const DisabledNoContext: Story = {
  args: { defaultOpen: true },
  render: (args) => (
    <Conversation script={{ context: false, chats: { c: { messages: threeTurns } } }}>
      <CommandMenu {...args} />
    </Conversation>
  ),
  play: async () => {
    const option = await screen.findByRole("option", { name: /Summarise the start of this chat/ });
    await expect(option).toHaveAttribute("aria-disabled", "true");
    await expect(option).toHaveAccessibleDescription("This chat's engine does not summarise");
  },
};

export const DisabledNothingToFold: Story = {
  args: { defaultOpen: true },
  render: (args) => (
    <Conversation script={{ chats: { c: { messages: chatLogFrom([["Hello", "Hi!"]]) } } }}>
      <CommandMenu {...args} />
    </Conversation>
  ),
  play: async () => {
    const option = await screen.findByRole("option", { name: /Summarise the start of this chat/ });
    await waitFor(() => expect(option).toHaveAccessibleDescription("Nothing to summarise yet"));
    await expect(option).toHaveAttribute("aria-disabled", "true");
  },
};

export const OpensOnShortcut: Story = {
  render: (args) => (
    <Conversation script={{ chats: { c: { messages: threeTurns } } }}>
      <p>Press ⌘K or Ctrl+K.</p>
      <CommandMenu {...args} />
    </Conversation>
  ),
  play: async ({ args }) => {
    await userEvent.keyboard("{Control>}k{/Control}");
    await screen.findByRole("dialog", { name: "Command menu" });
    await expect(args.onOpenChange).toHaveBeenLastCalledWith(true);
    await userEvent.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    await userEvent.keyboard("{Meta>}k{/Meta}");
    await screen.findByRole("dialog", { name: "Command menu" });
    await userEvent.keyboard("{Meta>}k{/Meta}");
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  },
};

export const ItemInTheAppsOwnPalette: Story = {
  render: () => (
    <Conversation script={{ chats: { c: { messages: threeTurns } } }}>
      <Command label="App palette">
        <Command.Input aria-label="Search commands" placeholder="Search…" />
        <Command.List>
          <Command.Group heading="App">
            <Command.Item>Open settings</Command.Item>
          </Command.Group>
          <Command.Group heading="Chat">
            <CompactCommandItem keep="the VAT column" />
          </Command.Group>
        </Command.List>
      </Command>
    </Conversation>
  ),
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const option = canvas.getByRole("option", { name: /Summarise the start of this chat/ });
    await waitFor(() => expect(option).toHaveAttribute("aria-disabled", "false"));
    await userEvent.click(option);
    await waitFor(() => expect(option).toHaveAttribute("aria-disabled", "true"));
    await expect(option).toHaveAccessibleDescription("Everything before the last message is already summarised");
  },
};
