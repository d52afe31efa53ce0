import type { TurnProblem } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactNode } from "react";
import { describe, expect, it } from "vitest";
import { ComposerRoot } from "./composer.js";
import { ConversationProvider, useConversation } from "./conversation.js";
import { MessageListRoot } from "./message-list.js";

function renderChat(engine: ReturnType<typeof createMockEngine>, ui: ReactNode) {
  return render(
    <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
      {ui}
    </ConversationProvider>,
  );
}

const row = (container: HTMLElement, seq: number) => container.querySelector(`[data-seq="${seq}"]`) as HTMLElement;

describe("a reply cut off at the output limit", () => {
  it("should carry a quiet mark and a Continue that sends a new turn with the fixed prompt, never learned from", async () => {
    const user = userEvent.setup();
    const engine = createMockEngine({
      turns: [{ reply: "One, two, three,", finishReason: "length" }, { reply: "four, five." }],
    });
    const view = renderChat(
      engine,
      <>
        <MessageListRoot />
        <ComposerRoot />
      </>,
    );
    await user.type(await screen.findByRole("textbox", { name: "Message" }), "Count to five{Enter}");
    await waitFor(() => expect(row(view.container, 1)).toHaveAttribute("data-nacre-cut-off"));
    expect(within(row(view.container, 1)).getByText("Cut off")).toBeInTheDocument();
    const next = await screen.findByRole("button", { name: "Continue" });
    expect(next).toHaveAttribute("data-nacre-continue");

    await user.click(next);

    await waitFor(() => expect(row(view.container, 3)).toHaveTextContent("four, five."));
    expect(row(view.container, 2)).toHaveAttribute("data-role", "user");
    expect(row(view.container, 2)).toHaveTextContent("Continue");
    expect(row(view.container, 3)).not.toHaveAttribute("data-nacre-cut-off");
    expect(screen.queryByRole("button", { name: "Continue" })).toBeNull();
    expect(engine.calls.at(-1)).toMatchObject({ text: "Continue", continuation: true });
    const log = await engine.loadChat("c");
    expect(log.messages[2]).toMatchObject({ role: "user", continuation: true });
  });

  it("should send the host's own prompt when it replaces it", async () => {
    const user = userEvent.setup();
    const engine = createMockEngine({ turns: [{ reply: "Un, deux,", finishReason: "length" }, {}] });
    render(
      <ConversationProvider
        engine={engine}
        chatId="c"
        queryClient={new QueryClient()}
        messages={{ continueReply: "Continuer", continuePrompt: "Continue là où tu t'es arrêté." }}
      >
        <MessageListRoot />
        <ComposerRoot />
      </ConversationProvider>,
    );
    await user.type(await screen.findByRole("textbox", { name: "Message" }), "Compte{Enter}");
    await user.click(await screen.findByRole("button", { name: "Continuer" }));
    await waitFor(() => expect(engine.calls).toHaveLength(2));
    expect(engine.calls[1]).toMatchObject({ text: "Continue là où tu t'es arrêté.", continuation: true });
  });
});

describe("a reply the person stopped", () => {
  it("should say it was stopped", async () => {
    const user = userEvent.setup();
    const engine = createMockEngine({ turns: { reply: "a long answer, word by word, ".repeat(20) }, delayMs: 20 });
    const view = renderChat(
      engine,
      <>
        <MessageListRoot />
        <ComposerRoot />
      </>,
    );
    await user.type(await screen.findByRole("textbox", { name: "Message" }), "Go{Enter}");
    await waitFor(() => expect(view.container.querySelector("[data-streaming]")).toHaveTextContent("a long"));
    await user.click(screen.getByRole("button", { name: "Stop" }));
    await waitFor(() => expect(within(row(view.container, 1)).getByText("Stopped")).toBeInTheDocument());
    expect(row(view.container, 1)).not.toHaveAttribute("data-nacre-cut-off");
  });
});

describe("MessageActions", () => {
  it("should be in every message rendered in full, with Copy copying the text as Markdown", async () => {
    const user = userEvent.setup();
    const engine = createMockEngine({
      chats: { c: { messages: chatLogFrom([["What is **bold**?", "Text like **this**, with `code`."]]) } },
    });
    const view = renderChat(engine, <MessageListRoot />);
    await waitFor(() => expect(view.container.querySelectorAll("[data-nacre-message]")).toHaveLength(2));
    for (const message of view.container.querySelectorAll("[data-nacre-message]")) {
      expect(message.querySelector(":scope > [data-nacre-message-actions] [data-nacre-message-copy]")).not.toBeNull();
    }
    const copy = row(view.container, 1).querySelector("[data-nacre-message-copy]") as HTMLButtonElement;
    expect(copy).toHaveAccessibleName("Copy");
    await user.click(copy);
    expect(await navigator.clipboard.readText()).toBe("Text like **this**, with `code`.");
    await waitFor(() => expect(copy).toHaveAttribute("data-copied"));
    expect(copy).toHaveAccessibleName("Copied");
  });
});

const tooLong: TurnProblem = {
  kind: "too-long",
  title: "This chat is too long for the model",
  window: 8_000,
  next: { type: "new-chat", message: "the whole log" },
};

function Compact() {
  const conversation = useConversation();
  return (
    <button type="button" onClick={() => void conversation.compact?.()}>
      compact now
    </button>
  );
}

describe("a person's message left unanswered after /compact cleared its too-long card", () => {
  it("should offer Send again, which answers the message in place", async () => {
    const user = userEvent.setup();
    const engine = createMockEngine({
      chats: {
        c: {
          messages: chatLogFrom([
            ["a", "b"],
            ["c", "d"],
          ]),
        },
      },
      turns: [{ problem: tooLong }, { reply: "Now it fits." }],
    });
    const view = renderChat(
      engine,
      <>
        <MessageListRoot />
        <ComposerRoot />
        <Compact />
      </>,
    );
    await user.type(await screen.findByRole("textbox", { name: "Message" }), "the whole log{Enter}");
    await screen.findByRole("group", { name: "This chat is too long for the model" });
    expect(view.container.querySelector("[data-nacre-send-again]")).toBeNull();

    await act(async () => {
      await user.click(screen.getByRole("button", { name: "compact now" }));
    });

    await waitFor(() => expect(screen.queryByRole("group", { name: /too long/ })).toBeNull());
    const sendAgain = await waitFor(() => {
      const button = view.container.querySelector("[data-nacre-send-again]");
      expect(button).not.toBeNull();
      return button as HTMLButtonElement;
    });
    expect(sendAgain).toHaveAccessibleName("Send again");
    await user.click(sendAgain);
    await waitFor(() => expect(row(view.container, 5)).toHaveTextContent("Now it fits."));
    expect(view.container.querySelectorAll('[data-role="user"]')).toHaveLength(3);
    expect(view.container.querySelector("[data-nacre-send-again]")).toBeNull();
  });
});
