import type { ChatMessage } from "@conch/engine-client";
import { Message, MessageActions, MessageCopy } from "@conch/nacre";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, userEvent, within } from "storybook/test";

const cutOff: ChatMessage = {
  seq: 1,
  role: "assistant",
  parts: [{ type: "text", text: "The steps so far: 1. set up the project, 2. write the commands, 3. test each" }],
  finishReason: "length",
};
const stopped: ChatMessage = {
  seq: 3,
  role: "assistant",
  parts: [{ type: "text", text: "Once upon a time" }],
  finishReason: "aborted",
};
const asked: ChatMessage = { seq: 2, role: "user", parts: [{ type: "text", text: "And a story?" }] };

function Messages() {
  return (
    <ol data-nacre-message-items="" style={{ maxWidth: 560 }}>
      <Message message={cutOff} />
      <Message message={asked} />
      <Message message={stopped} />
      <Message message={{ ...stopped, seq: 4, finishReason: "stop" }}>
        <span data-nacre-message-role="">Model</span>
        <div data-nacre-message-text="">Once upon a time</div>
        <MessageActions>
          <MessageCopy />
          <MessageCopy format="text">Copy as text</MessageCopy>
        </MessageActions>
      </Message>
    </ol>
  );
}

const meta = {
  title: "Nacre/Message actions",
  component: Messages,
} satisfies Meta<typeof Messages>;
export default meta;
type Story = StoryObj<typeof meta>;

/** Every message carries its actions (shown on hover and focus); a cut-off reply and a stopped one say so. */
export const EndingsAndActions: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvasElement.querySelectorAll("[data-nacre-message-actions]")).toHaveLength(4);
    await expect(canvasElement.querySelector('[data-seq="1"]')).toHaveAttribute("data-nacre-cut-off");
    await expect(canvas.getByText("Cut off")).toBeInTheDocument();
    await expect(canvas.getByText("Stopped")).toBeInTheDocument();
    // Reached with Tab: focus shows the actions (nacre.css).
    const asText = canvas.getByRole("button", { name: "Copy as text" });
    asText.focus();
    await expect(asText).toHaveFocus();
    await userEvent.keyboard("{Shift>}{Tab}{/Shift}");
    await expect(canvas.getAllByRole("button", { name: "Copy" }).at(-1)).toHaveFocus();
  },
};
