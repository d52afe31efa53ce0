import type { Meta, StoryObj } from "@storybook/react-vite";
import { type ComponentProps, useState } from "react";
import { expect, screen, userEvent, waitFor, within } from "storybook/test";
import { MockDemo } from "../dev/MockDemo.js";

/** The demo page on a database of its own for each story: what one story sent is not there for the next. */
function FreshMockDemo(props: Omit<ComponentProps<typeof MockDemo>, "databaseName">) {
  const [databaseName] = useState(() => `nacre-story-${crypto.randomUUID()}`);
  return <MockDemo {...props} databaseName={databaseName} />;
}

/** The whole chat on the mock engine: the demo page, with a generated long chat instead of a real transcript. */
const meta = {
  title: "Demo/Whole chat on the mock engine",
  component: MockDemo,
  args: { transcript: null, delayMs: 0 },
  render: (args) => <FreshMockDemo {...args} />,
  parameters: { layout: "fullscreen" },
  decorators: [(Story) => <div style={{ height: 760 }}>{Story()}</div>],
} satisfies Meta<typeof MockDemo>;
export default meta;
type Story = StoryObj<typeof meta>;

async function send(canvas: ReturnType<typeof within>, text: string) {
  const box = canvas.getByRole("textbox", { name: "Message" });
  await userEvent.type(box, `${text}{Enter}`);
  await waitFor(() => expect(canvas.getByRole("button", { name: "Send" })).toBeInTheDocument(), { timeout: 10_000 });
}

export const FoldsRetriesAndTooLong: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const line = await canvas.findByRole("button", { name: /Earlier messages are summarised for Mock Large/ });
    await expect(canvasElement.querySelectorAll("[data-nacre-summary-divider]")).toHaveLength(1);

    // 1: a scripted fold before the answer moves the line.
    const before = line.closest("li")?.nextElementSibling?.getAttribute("data-seq");
    await send(canvas, "What is still open?");
    // In the list (the live region repeats the finished reply for screen readers).
    const list = within(canvasElement.querySelector("[data-nacre-message-items]") as HTMLElement);
    await waitFor(() => expect(list.getByText(/I summarised the start of this chat/)).toBeInTheDocument());
    const after = canvasElement.querySelector("[data-nacre-divider-row]")?.nextElementSibling?.getAttribute("data-seq");
    await expect(Number(after)).toBeGreaterThan(Number(before));

    // 2: a quiet retry, noted in Health.
    await send(canvas, "List the modules.");
    await waitFor(() => expect(canvas.getByText("Quiet retry")).toBeInTheDocument());

    // The ⌘K action folds the rest.
    await userEvent.keyboard("{Control>}k{/Control}");
    const option = await screen.findByRole("option", { name: /Summarise the start of this chat/ });
    await waitFor(() => expect(option).toHaveAttribute("aria-disabled", "false"));
    await userEvent.keyboard("{Enter}");
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());

    // 3: a plain answer, then /compact with what to keep.
    await send(canvas, "And the rate limiter?");
    await userEvent.type(canvas.getByRole("textbox", { name: "Message" }), "/compact the rate limits{Enter}");
    await waitFor(() => expect(canvas.getByText("The start of this chat is summarised.")).toBeInTheDocument());

    // 4: too long; its one next step opens a new chat with the message in its box.
    await send(canvas, "Here is the whole log.");
    const card = await waitFor(() => {
      const found = canvasElement.querySelector("[data-nacre-turn-problem]");
      if (!found) throw new Error("no card yet");
      return found as HTMLElement;
    });
    await expect(card).toHaveAttribute("data-kind", "too-long");
    await userEvent.click(within(card).getByRole("button", { name: "Start a new chat with this message" }));
    await waitFor(() => expect(canvas.getByRole("textbox", { name: "Message" })).toHaveValue("Here is the whole log."));
  },
};

export const SwitchesToAModelThatReadsMore: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await canvas.findByRole("button", { name: /Earlier messages are summarised/ });
    await userEvent.selectOptions(canvas.getByRole("combobox", { name: "Model" }), "mock-small");
    await waitFor(() => expect(canvas.getByRole("combobox", { name: "Model" })).toHaveValue("mock-small"));
    for (const text of ["one", "two", "three"]) await send(canvas, text);
    await send(canvas, "four, too long for Mock Small");
    const switchTo = await canvas.findByRole("button", { name: "Switch to Mock Large, which reads 4× more" });
    await userEvent.click(switchTo);
    await waitFor(() => expect(canvas.getByRole("combobox", { name: "Model" })).toHaveValue("mock-large"));
    // The message is sent again to the model that reads more.
    await waitFor(() =>
      expect(canvasElement.querySelectorAll('[data-nacre-message][data-role="user"]')).not.toHaveLength(0),
    );
    await waitFor(() => expect(canvasElement.querySelector("[data-nacre-turn-problem]")).toBeNull());
    const users = [...canvasElement.querySelectorAll('[data-nacre-message][data-role="user"]')];
    await expect(users.at(-1)).toHaveTextContent("four, too long for Mock Small");
  },
};
