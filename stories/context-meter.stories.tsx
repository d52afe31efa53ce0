import { ContextMeter } from "@conch/nacre";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, within } from "storybook/test";
import { Conversation, threeTurns } from "./support.js";

const meta = {
  title: "Nacre/ContextMeter",
  component: ContextMeter.Root,
  args: { model: "Mock Large" },
  decorators: [(Story) => <div style={{ maxWidth: 320 }}>{Story()}</div>],
} satisfies Meta<typeof ContextMeter.Root>;
export default meta;
type Story = StoryObj<typeof meta>;

function level(share: number, name: string): Story {
  return {
    args: { usage: { usedTokens: Math.round(32_000 * share), window: 32_000, budget: 22_700, factor: 1.1, share } },
    play: async ({ canvasElement }) => {
      const meter = within(canvasElement).getByRole("meter", { name: "Context used" });
      await expect(meter).toHaveAttribute("data-level", name);
      await expect(meter).toHaveAttribute("aria-valuenow", String(Math.round(share * 100)));
      await expect(meter.getAttribute("aria-valuetext")).toMatch(/of Mock Large's window/);
    },
  };
}

export const Low = level(0.12, "low");
export const Medium = level(0.62, "medium");
export const High = level(0.84, "high");
export const Full = level(0.97, "full");

/** After a too-long refusal that said how many tokens the provider counted: the meter shows that count. */
export const ProviderCount: Story = {
  args: {
    usage: { usedTokens: 33_377, window: 32_000, budget: 22_700, factor: 1, share: 33_377 / 32_000 },
    source: "provider",
  },
  play: async ({ canvasElement }) => {
    const meter = within(canvasElement).getByRole("meter", { name: "Context used" });
    await expect(meter).toHaveAttribute("data-source", "provider");
    await expect(meter.getAttribute("aria-valuetext")).toBe(
      "104% of Mock Large's window (33,377 of 32,000 tokens, as the provider counted)",
    );
  },
};

export const Unknown: Story = {
  args: { usage: null },
  play: async ({ canvasElement }) => {
    await expect(canvasElement.querySelector("[data-nacre-context-meter]")).toBeNull();
  },
};

export const Dark: Story = {
  ...level(0.62, "medium"),
  render: (args) => (
    <div data-nacre-theme="dark" style={{ padding: 16 }}>
      <ContextMeter.Root {...args} />
    </div>
  ),
};

export const FromTheEngine: Story = {
  args: { model: undefined },
  render: () => (
    <Conversation script={{ chats: { c: { messages: threeTurns } } }}>
      <ContextMeter.Root />
    </Conversation>
  ),
  play: async ({ canvasElement }) => {
    const meter = await within(canvasElement).findByRole("meter");
    await expect(meter.getAttribute("aria-valuetext")).toMatch(
      /^\d+% of Mock Large's window \([\d,]+ of 32,000 tokens\)$/,
    );
  },
};
