import "../nacre.css";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { act, cleanup, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConversationProvider } from "../conversation.js";
import { MessageListItems, MessageListRoot } from "../message-list.js";
import { renderBranchMessage } from "./branches.js";

afterEach(cleanup);
const chatId = "branches";
beforeEach(() => sessionStorage.removeItem(`nacre:message-list:mock:${chatId}`));

/** A loaded machine can take seconds to render: wait on conditions, generously. */
const patient = { timeout: 30_000 };

function renderChat() {
  const engine = createMockEngine({
    turns: (input, call) => ({ reply: `Answer ${call} to ${input.text}` }),
    chats: {
      [chatId]: {
        messages: chatLogFrom([
          ["one", "Answer to one"],
          ["two", "Answer to two"],
          ["three", "Answer to three"],
        ]),
      },
    },
  });
  const view = render(
    <div style={{ height: "600px", display: "grid" }}>
      <ConversationProvider engine={engine} chatId={chatId}>
        <MessageListRoot style={{ minHeight: 0 }}>
          <MessageListItems renderMessage={renderBranchMessage} />
        </MessageListRoot>
      </ConversationProvider>
    </div>,
  );
  const row = (seq: number) => view.container.querySelector<HTMLElement>(`[data-nacre-message][data-seq="${seq}"]`);
  const shownSeqs = () =>
    [...view.container.querySelectorAll("[data-nacre-message]")].map((node) => Number(node.getAttribute("data-seq")));
  return { engine, view, row, shownSeqs };
}

describe("Edit, Regenerate and the BranchPicker in Chromium", { timeout: 90_000 }, () => {
  it("should edit a message in place, answer it, and move between the versions by keyboard", async () => {
    const { engine, row, shownSeqs } = renderChat();
    await expect.poll(() => row(2), patient).not.toBeNull();
    // Edit opens the Composer in place of the person's message, its text in it.
    await act(async () =>
      within(row(2) as HTMLElement)
        .getByRole("button", { name: "Edit" })
        .click(),
    );
    const editor = await screen.findByRole("textbox", { name: "Edit message" });
    expect(editor).toHaveValue("two");
    expect(document.activeElement).toBe(editor);
    await userEvent.clear(editor);
    await userEvent.type(editor, "two, edited");
    await userEvent.keyboard("{Enter}");
    await expect.poll(shownSeqs, patient).toEqual([0, 1, 6, 7]);
    expect(engine.calls.at(-1)).toMatchObject({ seq: 6, parent: 1, text: "two, edited" });
    const picker = await expect
      .poll(() => row(6)?.querySelector("[data-nacre-branch-picker]"), patient)
      .not.toBeNull()
      .then(() => within(row(6) as HTMLElement).getByRole("group", { name: "Versions" }));
    expect(picker).toHaveTextContent("2 / 2");
    expect(within(picker).getByText("Version 2 of 2")).toBeInTheDocument();
    expect(within(picker).getByRole("button", { name: "Next version" })).toBeDisabled();
    // Keyboard: focus Previous, press Enter: the first version's branch, whole, and the focus on its picker.
    within(picker).getByRole("button", { name: "Previous version" }).focus();
    await userEvent.keyboard("{Enter}");
    await expect.poll(shownSeqs, patient).toEqual([0, 1, 2, 3, 4, 5]);
    await expect
      .poll(() => document.activeElement?.closest("[data-nacre-branch-picker]")?.getAttribute("data-versions"), patient)
      .toBe("2 6");
    expect(document.activeElement).toHaveAttribute("data-nacre-branch-next");
    expect(within(row(2) as HTMLElement).getByRole("group", { name: "Versions" })).toHaveTextContent("1 / 2");
    await userEvent.keyboard("{Enter}");
    await expect.poll(shownSeqs, patient).toEqual([0, 1, 6, 7]);
  });

  it("should regenerate an answer as a new version beside the old one", async () => {
    const { engine, row, shownSeqs } = renderChat();
    await expect.poll(() => row(5), patient).not.toBeNull();
    await act(async () =>
      within(row(5) as HTMLElement)
        .getByRole("button", { name: "Regenerate" })
        .click(),
    );
    await expect.poll(shownSeqs, patient).toEqual([0, 1, 2, 3, 4, 6]);
    expect(engine.calls.at(-1)).toMatchObject({ seq: 4, retry: true });
    await expect
      .poll(() => row(6)?.querySelector("[data-nacre-branch-picker]")?.textContent, patient)
      .toContain("2 / 2");
    expect(row(6)).toHaveTextContent("Answer 0 to three");
    // A person's message has no Regenerate, an answer no Edit.
    expect(within(row(4) as HTMLElement).queryByRole("button", { name: "Regenerate" })).toBeNull();
    expect(within(row(6) as HTMLElement).queryByRole("button", { name: "Edit" })).toBeNull();
  });
});
