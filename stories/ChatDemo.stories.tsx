import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, userEvent, within } from "storybook/test";
import { ChatDemo } from "../dev/ChatDemo.js";
import { createDemoEngine, demoChatId } from "../dev/demo-script.js";

const meta = {
  title: "Demo/Chat on the mock engine",
  component: ChatDemo,
} satisfies Meta<typeof ChatDemo>;
export default meta;
type Story = StoryObj<typeof meta>;

export const TypeAndFold: Story = {
  args: { engine: createDemoEngine({ delayMs: 0 }), chatId: demoChatId },
  render: () => <ChatDemo engine={createDemoEngine({ delayMs: 0 })} chatId={demoChatId} />,
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(await canvas.findByText(/Earlier messages are summarised for Mock Large/)).toBeInTheDocument();
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "What is still open?");
    await userEvent.click(canvas.getByRole("button", { name: "Send" }));
    await expect(await canvas.findByText(/Folded the start of the chat/)).toBeInTheDocument();
    await expect(
      await canvas.findByText(/Still open: the rate limiter's limits, and the dark theme/),
    ).toBeInTheDocument();
  },
};
