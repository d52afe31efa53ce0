import { Composer } from "@conch/nacre";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, fn, userEvent, waitFor, within } from "storybook/test";
import { Conversation, threeTurns } from "./support.js";

const meta = {
  title: "Nacre/Composer",
  component: Composer.Root,
  args: { onSubmitted: fn() },
  decorators: [(Story) => <div style={{ maxWidth: 560 }}>{Story()}</div>],
  render: (args) => (
    <Conversation script={{ chats: { c: { messages: threeTurns } }, turns: { reply: "Sure." } }}>
      <Composer.Root {...args} />
    </Conversation>
  ),
} satisfies Meta<typeof Composer.Root>;
export default meta;
type Story = StoryObj<typeof meta>;

export const Empty: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvas.getByRole("textbox", { name: "Message" })).toBeVisible();
    await expect(canvas.getByRole("button", { name: "Send" })).toBeDisabled();
  },
};

export const SendsAMessage: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "What about the PDF export?{Enter}");
    await waitFor(() => expect(args.onSubmitted).toHaveBeenCalledWith(expect.objectContaining({ type: "sent" })));
  },
};

export const CompactHint: Story = {
  args: { defaultValue: "/compact" },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvas.getByText("/compact [what to keep] summarises the start of this chat now.")).toBeVisible();
    await waitFor(() => expect(canvas.getByRole("button", { name: "Summarise" })).toBeEnabled());
    await expect(canvasElement.querySelector("[data-nacre-composer]")).toHaveAttribute("data-command", "compact");
  },
};

export const CompactWithWhatToKeep: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "/compact the VAT column{Enter}");
    await waitFor(() => expect(args.onSubmitted).toHaveBeenCalledWith({ type: "compact", result: "compacted" }));
    await expect(canvas.getByText("The start of this chat is summarised.")).toBeVisible();
  },
};

export const CarriedIntoANewChat: Story = {
  args: { defaultValue: "Here is the whole build log, what failed?" },
  play: async ({ canvasElement }) => {
    await expect(within(canvasElement).getByRole("textbox", { name: "Message" })).toHaveValue(
      "Here is the whole build log, what failed?",
    );
  },
};
