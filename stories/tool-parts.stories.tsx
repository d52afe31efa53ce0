import { ToolCall, ToolResult } from "@conch/nacre";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, userEvent, within } from "storybook/test";

const longOutput = Array.from(
  { length: 240 },
  (_, index) => `src/module-${index}.ts  ${(index * 37) % 900} lines`,
).join("\n");

function ToolParts() {
  return (
    <div style={{ maxWidth: 560, fontFamily: "var(--nacre-font)", color: "var(--nacre-fg)" }}>
      <ToolCall call={{ name: "read_file", arguments: '{"path":"src/export/invoices.ts","lines":[1,120]}' }} />
      <ToolResult result={{ name: "read_file", text: "export function row(invoice) {\n  return invoice.id;\n}" }} />
      <ToolCall call={{ name: "list_files", arguments: '{"dir":"src","recursive":true}' }} />
      <ToolResult result={{ name: "list_files", text: longOutput }} />
      <ToolResult result={{ name: "run_tests", text: "1 failed: invoices.test.ts", isError: true }} />
    </div>
  );
}

const meta = {
  title: "Nacre/Tool parts",
  component: ToolParts,
} satisfies Meta<typeof ToolParts>;
export default meta;
type Story = StoryObj<typeof meta>;

/** A call with its arguments summarised; a short result open; a long one closed with its size; a failed one. */
export const CallsAndResults: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const long = canvas.getByRole("button", { name: /Result of list_files/ });
    await expect(long).toHaveAttribute("aria-expanded", "false");
    await expect(long).toHaveTextContent("240 lines");
    await expect(canvas.getByRole("button", { name: /Result of read_file/ })).toHaveAttribute("aria-expanded", "true");
    const call = canvas.getByRole("button", { name: /Called read_file/ });
    await userEvent.click(call);
    await expect(call).toHaveAttribute("aria-expanded", "true");
  },
};
