import type { HealthNote } from "@conch/engine-client";
import { HealthNotes } from "@conch/nacre";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, within } from "storybook/test";

const notes: HealthNote[] = [
  {
    id: "3",
    chatId: "c",
    kind: "window-learned",
    text: "Mock Small named its window in a refusal: 8,192 tokens. Chats on it now fit that.",
    at: Date.UTC(2026, 9, 3, 12, 20),
    model: "mock-small",
  },
  {
    id: "2",
    chatId: "c",
    kind: "summary-failed",
    text: "No model wrote a summary; the earliest turns were dropped and the previous summary stays.",
    at: Date.UTC(2026, 9, 3, 12, 5),
  },
  {
    id: "1",
    chatId: "c",
    kind: "healed",
    text: "Mock Large refused the request as too long (window 32000 tokens); it was shortened and sent again.",
    at: Date.UTC(2026, 9, 3, 12, 0),
    provider: "openai",
  },
];

const meta = {
  title: "Nacre/HealthNotes",
  component: HealthNotes.Root,
  args: { notes },
  decorators: [(Story) => <div style={{ maxWidth: 360 }}>{Story()}</div>],
} satisfies Meta<typeof HealthNotes.Root>;
export default meta;
type Story = StoryObj<typeof meta>;

export const NewestFirst: Story = {
  play: async ({ canvasElement }) => {
    const region = within(canvasElement).getByRole("region", { name: "Health" });
    const items = within(region).getAllByRole("listitem");
    await expect(items.map((item) => item.getAttribute("data-kind"))).toEqual([
      "window-learned",
      "summary-failed",
      "healed",
    ]);
    await expect(items[2]).toHaveTextContent("Quiet retry");
  },
};

export const Empty: Story = {
  args: { notes: [] },
  play: async ({ canvasElement }) => {
    await expect(within(canvasElement).getByText("Nothing to report.")).toBeVisible();
  },
};

export const Dark: Story = {
  render: (args) => (
    <div data-nacre-theme="dark" style={{ padding: 16 }}>
      <HealthNotes.Root {...args} />
    </div>
  ),
};
