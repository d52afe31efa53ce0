import type { ChatMessage } from "@conch/engine-client";
import { useConversation } from "@conch/nacre";
import { BranchMessage, BranchPicker } from "@conch/nacre/branches";
import type { Meta, StoryObj } from "@storybook/react-vite";
import { expect, userEvent, waitFor, within } from "storybook/test";
import { Conversation, threeTurns } from "./support.js";

/** The log with a second version of the person's second message (seq 6, after the first answer) and its answer. */
const versions: ChatMessage[] = [
  ...threeTurns,
  { seq: 6, role: "user", parent: 1, parts: [{ type: "text", text: "Does the export add a VAT number column?" }] },
  { seq: 7, role: "assistant", parts: [{ type: "text", text: "Yes: since March, after the amount." }] },
];

function Rows() {
  const conversation = useConversation();
  return (
    <ol data-nacre-message-items="" style={{ maxWidth: 560 }}>
      {conversation.messages.map((message) => (
        <BranchMessage key={message.seq} message={message} />
      ))}
    </ol>
  );
}

function Versions() {
  return (
    <Conversation script={{ chats: { c: { messages: versions } } }}>
      <Rows />
    </Conversation>
  );
}

/** The row of the message at `seq`; throws until it is there (so that `waitFor` waits for it). */
function row(canvas: HTMLElement, seq: number): HTMLElement {
  const found = canvas.querySelector<HTMLElement>(`[data-nacre-message][data-seq="${seq}"]`);
  if (!found) throw new Error(`no row for seq ${seq} yet`);
  return found;
}

const meta = {
  title: "Nacre/Versions",
  component: Versions,
} satisfies Meta<typeof Versions>;
export default meta;
type Story = StoryObj<typeof meta>;

/** A message with two versions shows the picker (‹ 2 / 2 ›); Previous moves to the first version's branch. */
export const Picker: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const picker = await canvas.findByRole("group", { name: "Versions" });
    await expect(picker).toHaveTextContent("2 / 2");
    await expect(within(picker).getByRole("button", { name: "Next version" })).toBeDisabled();
    await userEvent.click(within(picker).getByRole("button", { name: "Previous version" }));
    const first = await waitFor(() => row(canvasElement, 2));
    await expect(within(first).getByRole("group", { name: "Versions" })).toHaveTextContent("1 / 2");
  },
};

/** Edit opens the Composer in place of the person's message; Escape puts the message back. */
export const EditInPlace: Story = {
  play: async ({ canvasElement }) => {
    const canvas = within(canvasElement);
    const asked = await waitFor(() => row(canvasElement, 6));
    await userEvent.click(within(asked).getByRole("button", { name: "Edit" }));
    const editor = await canvas.findByRole("textbox", { name: "Edit message" });
    await expect(editor).toHaveValue("Does the export add a VAT number column?");
    await expect(canvas.getByRole("button", { name: "Send" })).toBeInTheDocument();
    await userEvent.keyboard("{Escape}");
    await waitFor(() => expect(canvas.queryByRole("textbox", { name: "Edit message" })).toBeNull());
  },
};

/** The picker's parts, composed by hand around a message of the conversation. */
export const ComposedPicker: Story = {
  render: () => (
    <Conversation script={{ chats: { c: { messages: versions } } }}>
      <PickerOnly />
    </Conversation>
  ),
  play: async ({ canvasElement }) => {
    const picker = await within(canvasElement).findByRole("group", { name: "Versions" });
    await expect(picker).toHaveAttribute("data-versions", "2 6");
  },
};

function PickerOnly() {
  const conversation = useConversation();
  const message = conversation.messages.find((candidate) => candidate.siblings);
  if (!message) return null;
  return (
    <BranchPicker.Root message={message}>
      <BranchPicker.Previous>Previous</BranchPicker.Previous>
      <BranchPicker.Count />
      <BranchPicker.Next>Next</BranchPicker.Next>
    </BranchPicker.Root>
  );
}
