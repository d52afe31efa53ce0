import { NacreMessagesProvider, SummaryDivider } from "@conch/nacre";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { useState } from "react";
import { expect, fn, userEvent, waitFor, within } from "storybook/test";
import styles from "./summary-divider.module.css";
import { Conversation, summary, threeTurns } from "./support.js";

const meta = {
  title: "Nacre/SummaryDivider",
  component: SummaryDivider.Root,
  args: { summary, model: "Mock Large", foldedMessages: 4, onOpenChange: fn() },
} satisfies Meta<typeof SummaryDivider.Root>;
export default meta;
type Story = StoryObj<typeof meta>;

export const Closed: Story = {
  play: async ({ canvasElement }) => {
    const line = within(canvasElement).getByRole("button", { name: /Earlier messages are summarised for Mock Large/ });
    await expect(line).toHaveAttribute("aria-expanded", "false");
    await expect(line).toHaveTextContent("4 messages");
    await expect(line).not.toHaveTextContent(/tokens/);
  },
};

export const Open: Story = {
  args: { defaultOpen: true },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvas.getByRole("button")).toHaveAttribute("aria-expanded", "true");
    await expect(canvas.getByText(/The person is reviewing the invoice export/)).toBeVisible();
    await expect(canvas.getByText("Written by mock-small")).toBeVisible();
    await expect(canvas.getByText("Stands for about 1,880 tokens")).toBeVisible();
  },
};

export const OpensWithKeyboard: Story = {
  play: async ({ canvasElement, args }) => {
    const canvas = within(canvasElement);
    await userEvent.tab();
    await expect(canvas.getByRole("button")).toHaveFocus();
    await userEvent.keyboard("{Enter}");
    await expect(canvas.getByRole("button")).toHaveAttribute("aria-expanded", "true");
    await expect(args.onOpenChange).toHaveBeenLastCalledWith(true);
    await userEvent.keyboard(" ");
    await expect(canvas.getByRole("button")).toHaveAttribute("aria-expanded", "false");
  },
};

export const Summarising: Story = {
  args: { summarising: true },
  play: async ({ canvasElement }) => {
    await expect(within(canvasElement).getByRole("button")).toHaveTextContent("Summarising earlier messages…");
  },
};

export const FirstFoldSummarising: Story = {
  args: { summary: null, summarising: true },
  play: async ({ canvasElement }) => {
    const line = within(canvasElement).getByRole("button");
    await expect(line).toHaveTextContent("Summarising earlier messages…");
    await expect(line).toBeDisabled();
  },
};

const longSummary = Array.from(
  { length: 30 },
  (_, index) =>
    `- Turn ${index + 1}: the person asked about module ${index + 1}; the model explained it, wrote a test, and noted what is still open (names, numbers and links kept).`,
).join("\n");

export const LongSummary: Story = {
  args: {
    summary: { ...summary, text: longSummary, before: { messages: 64, tokens: 41_000 } },
    foldedMessages: 60,
    defaultOpen: true,
  },
  play: async ({ canvasElement }) => {
    await expect(within(canvasElement).getByText(/Turn 30: the person asked about module 30/)).toBeVisible();
  },
};

export const RightToLeft: Story = {
  args: {
    model: "نموذج كبير",
    summary: {
      ...summary,
      text: "الشخص يراجع تصدير الفواتير: يكتب صفًا واحدًا لكل فاتورة.\nما زال مفتوحًا: هل يمكن حذف تصدير PDF القديم؟",
    },
    defaultOpen: true,
  },
  render: (args) => (
    <div dir="rtl" lang="ar">
      <NacreMessagesProvider
        messages={{
          summaryDividerLabel: ({ model }) => `الرسائل السابقة ملخّصة لـ ${model}`,
          summaryDividerFolded: ({ messages }) => `${messages} رسائل`,
          summaryDividerWrittenBy: ({ model }) => `كتبه ${model}`,
        }}
      >
        <SummaryDivider.Root {...args} />
      </NacreMessagesProvider>
    </div>
  ),
  play: async ({ canvasElement }) => {
    const text = canvasElement.querySelector("[data-nacre-summary-text]");
    await expect(text).toHaveAttribute("dir", "auto");
    await expect(text).toHaveTextContent(/تصدير الفواتير/);
  },
};

export const ModelTextWithHtml: Story = {
  args: { summary: { ...summary, text: '<img src=x onerror="alert(1)"> <b>not bold</b>' }, defaultOpen: true },
  play: async ({ canvasElement }) => {
    await expect(within(canvasElement).getByText('<img src=x onerror="alert(1)"> <b>not bold</b>')).toBeVisible();
    await expect(canvasElement.querySelector("img, b")).toBeNull();
  },
};

export const NoSummaryWritten: Story = {
  args: { summary: { ...summary, text: "", model: null } },
  play: async ({ canvasElement }) => {
    const line = within(canvasElement).getByRole("button", { name: /no longer read by Mock Large/ });
    await userEvent.click(line);
    await expect(within(canvasElement).getByText(/They are all still here/)).toBeVisible();
  },
};

export const Controlled: Story = {
  render: (args) => {
    const [open, setOpen] = useState(false);
    return (
      <>
        <button type="button" onClick={() => setOpen((value) => !value)}>
          Toggle from outside
        </button>
        <SummaryDivider.Root {...args} open={open} onOpenChange={setOpen} />
      </>
    );
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await userEvent.click(canvas.getByRole("button", { name: "Toggle from outside" }));
    await expect(canvas.getByRole("button", { name: /summarised/ })).toHaveAttribute("aria-expanded", "true");
    await userEvent.click(canvas.getByRole("button", { name: /summarised/ }));
    await expect(canvas.getByRole("button", { name: /summarised/ })).toHaveAttribute("aria-expanded", "false");
  },
};

export const Styled: Story = {
  render: (args) => (
    <SummaryDivider.Root {...args} className={styles.divider}>
      <SummaryDivider.Trigger className={styles.line}>
        The model remembers from here — read what came before
      </SummaryDivider.Trigger>
      <SummaryDivider.Content className={styles.content} />
    </SummaryDivider.Root>
  ),
  play: async ({ canvasElement }) => {
    const line = within(canvasElement).getByRole("button", { name: /The model remembers from here/ });
    await userEvent.click(line);
    await waitFor(() => expect(within(canvasElement).getByText(/invoice export/)).toBeVisible());
  },
};

export const Animated: Story = {
  render: (args) => (
    <SummaryDivider.Root {...args}>
      <SummaryDivider.Trigger />
      <SummaryDivider.Content className={styles.content} />
    </SummaryDivider.Root>
  ),
  play: async ({ canvasElement }) => {
    await userEvent.click(within(canvasElement).getByRole("button"));
    const content = canvasElement.querySelector("[data-nacre-summary-divider-content]") as HTMLElement;
    await expect(content.style.getPropertyValue("--radix-collapsible-content-height")).not.toBe("");
  },
};

export const StateMatrix: Story = {
  render: (args) => (
    <div style={{ display: "grid", gap: 16 }}>
      {(["closed", "open"] as const).map((state) =>
        (["uncontrolled", "controlled"] as const).map((mode) =>
          ([false, true] as const).map((summarising) => (
            <section
              key={`${state}-${mode}-${summarising}`}
              aria-label={`${state}, ${mode}, ${summarising ? "summarising" : "idle"}`}
            >
              <SummaryDivider.Root
                {...args}
                summarising={summarising}
                {...(mode === "controlled" ? { open: state === "open" } : { defaultOpen: state === "open" })}
              />
            </section>
          )),
        ),
      )}
    </div>
  ),
  play: async ({ canvasElement }) => {
    await expect(canvasElement.querySelectorAll("[data-nacre-summary-divider][data-state='open']")).toHaveLength(4);
    await expect(canvasElement.querySelectorAll("[data-status='summarising']")).toHaveLength(4);
  },
};

export const Dark: Story = {
  args: { defaultOpen: true },
  render: (args) => (
    <div data-nacre-theme="dark" style={{ padding: 16 }}>
      <SummaryDivider.Root {...args} />
    </div>
  ),
};

export const InAConversation: Story = {
  args: { summary: undefined, model: undefined, foldedMessages: undefined },
  render: () => (
    <Conversation script={{ chats: { c: { messages: threeTurns, summary } } }}>
      <SummaryDivider.Root />
    </Conversation>
  ),
  play: async ({ canvasElement }) => {
    const line = await within(canvasElement).findByRole("button", { name: /summarised for Mock Large/ });
    await expect(line).toHaveTextContent("4 messages");
  },
};
