import { Markdown } from "@conch/nacre/markdown";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, userEvent, within } from "storybook/test";

const rich = [
  "## Exporting invoices",
  "",
  "The export reads the month's invoices and writes **one CSV row** each. Run it with `pnpm export --month 2026-10`.",
  "",
  "1. Load the invoices",
  "2. Add the ~~PDF~~ VAT column",
  "3. Write the file",
  "",
  "| column | from | note |",
  "| --- | --- | --- |",
  "| customer | `customer.name` | as typed |",
  "| vat | `customer.vatNumber` | may be empty |",
  "",
  "```ts",
  "export function row(invoice: Invoice): string {",
  '  return [invoice.customer.name, invoice.customer.vatNumber ?? ""].join(",");',
  "}",
  "```",
  "",
  "> Quoted: the old PDF export is linked only from the monthly report.",
  "",
  "See [the docs](https://example.com/docs) or write to <mailto:ana@example.com>.",
].join("\n");

const meta = {
  title: "Nacre/Markdown",
  component: Markdown,
  args: { text: rich },
  decorators: [(Story) => <div style={{ maxWidth: 560, fontFamily: "var(--nacre-font)" }}>{Story()}</div>],
} satisfies Meta<typeof Markdown>;
export default meta;
type Story = StoryObj<typeof meta>;

/** Headings, lists, a table, a code block with its copy button, a quote and links. */
export const RichReply: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvas.getByRole("heading", { level: 2, name: "Exporting invoices" })).toBeInTheDocument();
    await expect(canvas.getByRole("table")).toBeInTheDocument();
    await expect(canvas.getByRole("button", { name: "Copy" })).toBeInTheDocument();
    await expect(canvas.getByRole("link", { name: "the docs" })).toHaveAttribute("rel", "noopener noreferrer");
  },
};

/** A reply cut off inside a code fence, as it streams: the fence is a code block to the end, nothing else swallowed. */
export const CutOffInAFence: Story = {
  args: { text: "Here is the function:\n\n```ts\nexport function row(invoice: Invoice) {\n  return [invoice" },
  play: async ({ canvasElement }) => {
    await expect(canvasElement.querySelector("[data-nacre-code-block] code")?.textContent).toContain("return [invoice");
  },
};

/** A table cut off after its header row: the row shows as text until the delimiter row arrives. */
export const CutOffInATable: Story = {
  args: { text: "The columns:\n\n| column | from |" },
  play: async ({ canvasElement }) => {
    await expect(within(canvasElement).queryByRole("table")).toBeNull();
  },
};

/** Model text that tries HTML, script links and image beacons: all inert, shown as text or as plain links. */
export const HostileText: Story = {
  args: {
    text: [
      "<script>alert('x')</script>",
      "",
      "Hi <img src=https://tracker.example/p.png onerror=alert(1)> there.",
      "",
      "[run me](javascript:alert(1)) · [relative](/logout) · ![pixel](https://tracker.example/pixel.png?chat=42)",
    ].join("\n"),
  },
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    await expect(canvasElement.querySelector("script, img")).toBeNull();
    await expect(canvas.getByText("<script>alert('x')</script>")).toBeInTheDocument();
    await userEvent.click(canvas.getByText("run me"));
    await expect(
      canvas.getByRole("link", { name: /Image: pixel \(tracker.example, not loaded\)/ }),
    ).toBeInTheDocument();
  },
};
