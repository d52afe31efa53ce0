import type { ModelInfo, SendOptions, SummaryState, TurnProblem } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { type ReactNode, useEffect } from "react";
import { describe, expect, it } from "vitest";
import { ComposerRoot } from "./composer.js";
import { ContextMeterRoot } from "./context-meter.js";
import { ConversationProvider, type ConversationProviderProps, useConversation } from "./conversation.js";
import { MessageListRoot } from "./message-list.js";
import { TurnProblemRoot } from "./turn-problem.js";

const huge: ModelInfo = { id: "mock-huge", displayName: "Mock Huge", context: 1_000_000, ready: true, local: false };

/** A refusal after the heal: the provider counted far more than the estimate said. */
const refusedAfterHeal: TurnProblem = {
  kind: "too-long",
  title: "This chat is too long for the model",
  window: 32_000,
  countedTokens: 41_200,
  estimatedTokens: 1_300,
  next: { type: "switch-model", model: huge, readsTimes: 31 },
};

function renderChat(
  engine: ReturnType<typeof createMockEngine>,
  ui: ReactNode,
  props: Partial<ConversationProviderProps> = {},
) {
  return render(
    <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()} {...props}>
      {ui}
    </ConversationProvider>,
  );
}

const card = () => screen.queryByRole("group", { name: "This chat is too long for the model" });

/** Lets a test's host handler send in the conversation, as a host app does with its own state. */
function SendHandle({ onReady }: { onReady: (send: (text: string, options?: SendOptions) => void) => void }) {
  const conversation = useConversation();
  useEffect(() => {
    onReady((text, options) => void conversation.send(text, options));
  }, [conversation, onReady]);
  return null;
}

describe("the too-long flow", () => {
  describe("given the provider counted far more than the estimate", () => {
    it("should say both counts on the card, and the meter should show the provider's count", async () => {
      const engine = createMockEngine({ turns: { problem: refusedAfterHeal } });
      renderChat(
        engine,
        <>
          <ContextMeterRoot />
          <TurnProblemRoot />
        </>,
      );
      const meter = await screen.findByRole("meter", { name: "Context used" });
      expect(meter).toHaveAttribute("data-source", "estimate");
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 0, text: "huge paste" }).done;
      });
      const shown = await screen.findByRole("group", { name: "This chat is too long for the model" });
      expect(shown).toHaveTextContent("The provider counted 41,200 tokens where the estimate said 1,300.");
      await waitFor(() => expect(meter).toHaveAttribute("data-source", "provider"));
      expect(meter).toHaveAttribute("aria-valuenow", "100");
      expect(meter.getAttribute("aria-valuetext")).toBe(
        "129% of Mock Large's window (41,200 of 32,000 tokens, as the provider counted)",
      );
    });
  });

  describe("given the counts agree", () => {
    it("should not repeat them", () => {
      render(
        <TurnProblemRoot
          problem={{ ...refusedAfterHeal, countedTokens: 33_000, estimatedTokens: 32_500 }}
          onRetry={() => {}}
        />,
      );
      expect(screen.queryByText(/The provider counted/)).toBeNull();
    });
  });

  describe("when the person sends the message again from the card and it is answered", () => {
    it("should offer it, send the same words, and the card should go away", async () => {
      const user = userEvent.setup();
      const engine = createMockEngine({ turns: [{ problem: refusedAfterHeal }, { reply: "Answered." }] });
      renderChat(engine, <TurnProblemRoot />);
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 0, text: "huge paste" }).done;
      });
      await user.click(await screen.findByRole("button", { name: "Send again" }));
      await waitFor(() => expect(card()).toBeNull());
      expect(engine.calls.map((call) => call.text)).toEqual(["huge paste", "huge paste"]);
    });
  });

  describe("when the model is switched and the new one answers", () => {
    it("should hand the host the message's seq, and the card should go away once it is answered", async () => {
      const user = userEvent.setup();
      const engine = createMockEngine({ turns: [{ problem: refusedAfterHeal }, { reply: "On the bigger model." }] });
      let send: ((text: string, options?: SendOptions) => void) | null = null;
      renderChat(
        engine,
        <>
          <SendHandle onReady={(handle) => (send = handle)} />
          {/* The list shows the card after the person's message. */}
          <MessageListRoot />
        </>,
        {
          // The host switches the chat's model, then answers the same message again there.
          onSwitchModel: (_model, details) => {
            if (details.seq !== undefined) send?.(details.message, { retrySeq: details.seq });
          },
        },
      );
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 0, text: "huge paste" }).done;
      });
      await user.click(await screen.findByRole("button", { name: "Switch to Mock Huge, which reads 31× more" }));
      await waitFor(() => expect(card()).toBeNull());
      expect(await screen.findByText("On the bigger model.")).toBeInTheDocument();
      // Answered again, not sent twice: one message of the person's in the log.
      expect(screen.getAllByText("huge paste")).toHaveLength(1);
    });
  });

  describe("when /compact folds while the card stands", () => {
    it("should fold, say so, and the card should go away", async () => {
      const user = userEvent.setup();
      const engine = createMockEngine({
        chats: { c: { messages: chatLogFrom([["a", "A"]]) } },
        turns: { problem: { ...refusedAfterHeal, countedTokens: undefined, estimatedTokens: undefined } },
      });
      renderChat(
        engine,
        <>
          <TurnProblemRoot />
          <ComposerRoot />
        </>,
      );
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 2, text: "huge paste" }).done;
      });
      expect(await screen.findByRole("group", { name: "This chat is too long for the model" })).toBeInTheDocument();
      await user.type(screen.getByRole("textbox", { name: "Message" }), "/compact{Enter}");
      expect(await screen.findByText("The start of this chat is summarised.")).toBeInTheDocument();
      await waitFor(() => expect(card()).toBeNull());
    });
  });

  describe("when /compact runs after the heal already folded everything", () => {
    it("should say why there is nothing left to fold", async () => {
      const user = userEvent.setup();
      const summary: SummaryState = {
        text: "Earlier: a and b.",
        model: "mock-small",
        firstKeptSeq: 4,
        reason: "budget",
        before: { messages: 5, tokens: 4000 },
        after: { messages: 1, tokens: 900 },
        at: 0,
      };
      const messages = [
        ...chatLogFrom([
          ["a", "A"],
          ["b", "B"],
        ]),
        { seq: 4, role: "user" as const, parts: [{ type: "text" as const, text: "huge paste" }] },
      ];
      const engine = createMockEngine({ chats: { c: { messages, summary } } });
      renderChat(engine, <ComposerRoot />);
      await user.type(screen.getByRole("textbox", { name: "Message" }), "/compact{Enter}");
      expect(
        await screen.findByText(
          "Nothing left to summarise: everything before the last message is already in the summary.",
        ),
      ).toBeInTheDocument();
      expect(engine.calls).toHaveLength(0);
    });
  });
});

describe("the divider and folded messages", () => {
  it("should show the divider opens (a chevron, aria-expanded) and set folded messages apart", async () => {
    const user = userEvent.setup();
    const summary: SummaryState = {
      text: "Earlier: a.",
      model: "mock-small",
      firstKeptSeq: 2,
      reason: "budget",
      before: { messages: 4, tokens: 800 },
      after: { messages: 2, tokens: 300 },
      at: 0,
    };
    const engine = createMockEngine({
      chats: {
        c: {
          messages: chatLogFrom([
            ["folded question", "folded answer"],
            ["kept question", "kept answer"],
          ]),
          summary,
        },
      },
    });
    renderChat(engine, <MessageListRoot />);
    const trigger = await screen.findByRole("button", { name: /Earlier messages are summarised/ });
    expect(trigger).toHaveAttribute("aria-expanded", "false");
    expect(trigger.querySelector("[data-nacre-summary-divider-chevron]")).not.toBeNull();
    await user.click(trigger);
    expect(trigger).toHaveAttribute("aria-expanded", "true");
    expect(screen.getByText("folded question").closest("[data-nacre-message]")).toHaveAttribute("data-folded");
    expect(screen.getByText("kept question").closest("[data-nacre-message]")).not.toHaveAttribute("data-folded");
  });
});

describe("the live region", () => {
  it("should read the finished reply once, never the deltas, and not the replies already there", async () => {
    const user = userEvent.setup();
    const reply = "The export writes one row per customer.";
    const engine = createMockEngine({
      chats: { c: { messages: chatLogFrom([["old question", "old answer"]]) } },
      turns: { reply },
      chunkSize: 4,
      delayMs: 5,
    });
    renderChat(
      engine,
      <>
        <MessageListRoot />
        <ComposerRoot />
      </>,
    );
    const region = await screen.findByRole("status");
    expect(region).toHaveAttribute("aria-live", "polite");
    await screen.findByText("old answer");
    expect(region).toHaveTextContent("");
    const seen: string[] = [];
    const observer = new MutationObserver(() => seen.push(region.textContent ?? ""));
    observer.observe(region, { childList: true, characterData: true, subtree: true });
    await user.type(screen.getByRole("textbox", { name: "Message" }), "how?{Enter}");
    await waitFor(() => expect(region).toHaveTextContent(`Model: ${reply}`));
    observer.disconnect();
    // Perhaps one word while the turn starts (when a render falls between its start and the reply's), then the
    // finished reply: never the deltas.
    expect(seen.filter((text) => text !== "" && text !== "Working…")).toEqual([`Model: ${reply}`]);
    expect(within(screen.getByRole("region", { name: "Messages" })).getByText(reply)).toBeInTheDocument();
  });
});

describe("a sign of work", () => {
  it("should show a pending row and say one word from the turn's start to the reply's first word", async () => {
    const user = userEvent.setup();
    const reply = "Here it is.";
    // A quiet retry before the answer: the reply's first word comes a while after the turn starts.
    const engine = createMockEngine({ turns: { healed: {}, reply, delayMs: 150 } });
    const view = renderChat(
      engine,
      <>
        <MessageListRoot />
        <ComposerRoot />
      </>,
    );
    const region = await screen.findByRole("status");
    await user.type(screen.getByRole("textbox", { name: "Message" }), "hi{Enter}");
    await waitFor(() => expect(view.container.querySelector("[data-nacre-pending]")).not.toBeNull());
    expect(view.container.querySelector("[data-nacre-pending]")).toHaveAttribute("aria-hidden", "true");
    expect(region).toHaveTextContent("Working…");
    await waitFor(() => expect(region).toHaveTextContent(`Model: ${reply}`));
    expect(view.container.querySelector("[data-nacre-pending]")).toBeNull();
  });
});
