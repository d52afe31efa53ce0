import { type ModelInfo, messageText, type TurnProblem } from "@conch/engine-client";
import { createMockEngine } from "@conch/engine-client/mock";
import { enginesUnderTest } from "@conch/fake-provider";
import { QueryClient } from "@tanstack/react-query";
import { act, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { createRef } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConversationProvider, useConversation } from "./conversation.js";
import {
  TurnProblemAction,
  TurnProblemDescription,
  TurnProblemDetails,
  TurnProblemRoot,
  TurnProblemTitle,
} from "./turn-problem.js";

const huge: ModelInfo = { id: "mock-huge", displayName: "Mock Huge", context: 1_000_000, ready: true, local: false };

const problems: Record<TurnProblem["kind"], TurnProblem> = {
  "too-long": {
    kind: "too-long",
    title: "This chat is too long for the model",
    providerMessage: "This model's maximum context length is 8192 tokens.",
    next: { type: "switch-model", model: huge, readsTimes: 31 },
  },
  auth: { kind: "auth", title: "Key refused", next: { type: "open-settings", section: "provider" } },
  "rate-limited": { kind: "rate-limited", title: "Slow down", next: { type: "retry-after", seconds: 3 } },
  quota: { kind: "quota", title: "No credit", next: { type: "open-settings", section: "billing" } },
  "model-unavailable": { kind: "model-unavailable", title: "Gone", next: { type: "switch-model", model: huge } },
  offline: { kind: "offline", title: "Offline", next: { type: "retry" } },
  refused: { kind: "refused", title: "Declined", next: { type: "new-chat", message: "try elsewhere" } },
  "provider-error": { kind: "provider-error", title: "Error 500", status: 500, next: { type: "retry" } },
};

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(closers.splice(0).map((close) => close()));
});

function Sender() {
  const conversation = useConversation();
  return (
    <button type="button" onClick={() => void conversation.send("are you there?")}>
      send
    </button>
  );
}

describe("TurnProblem", () => {
  describe.each(Object.values(problems))("given a $kind problem", (problem) => {
    it("should render one card named by its title, with data-kind and exactly one button for the next step", () => {
      render(<TurnProblemRoot problem={problem} message="hello" model="Mock Large" onRetry={() => {}} />);
      const card = screen.getByRole("group", { name: problem.title });
      expect(card).toHaveAttribute("data-nacre-turn-problem");
      expect(card).toHaveAttribute("data-kind", problem.kind);
      const buttons = screen
        .getAllByRole("button")
        .filter((button) => button.hasAttribute("data-nacre-turn-problem-action"));
      expect(buttons).toHaveLength(1);
      expect(buttons[0]).toHaveAttribute("data-next", problem.next.type);
    });
  });

  describe("given too-long with a model that reads more", () => {
    it("should offer the switch with how many times more it reads, and hand the model and message to the host", async () => {
      const user = userEvent.setup();
      const onSwitchModel = vi.fn();
      render(
        <TurnProblemRoot problem={problems["too-long"]} message="my long question" onSwitchModel={onSwitchModel} />,
      );
      await user.click(screen.getByRole("button", { name: "Switch to Mock Huge, which reads 31× more" }));
      expect(onSwitchModel).toHaveBeenCalledWith(huge, { message: "my long question", problem: problems["too-long"] });
    });
  });

  describe("given too-long with no bigger model", () => {
    it("should offer a new chat that receives the message, not lose it", async () => {
      const user = userEvent.setup();
      const onNewChat = vi.fn();
      const problem: TurnProblem = {
        kind: "too-long",
        title: "Too long",
        next: { type: "new-chat", message: "the words the person wrote" },
      };
      render(<TurnProblemRoot problem={problem} onNewChat={onNewChat} />);
      const action = screen.getByRole("button", { name: "Start a new chat with this message" });
      action.focus();
      await user.keyboard("{Enter}");
      expect(onNewChat).toHaveBeenCalledWith("the words the person wrote");
      await user.keyboard(" ");
      expect(onNewChat).toHaveBeenCalledTimes(2);
    });

    it("should disable the step when the host gave no handler", () => {
      render(<TurnProblemRoot problem={{ kind: "too-long", title: "T", next: { type: "new-chat", message: "m" } }} />);
      expect(screen.getByRole("button", { name: "Start a new chat with this message" })).toBeDisabled();
    });
  });

  describe("given the provider's own words", () => {
    it("should keep them behind a disclosure that opens with the keyboard, as text", async () => {
      const user = userEvent.setup();
      const problem = { ...problems.offline, providerMessage: "<script>alert(1)</script> upstream timed out" };
      render(<TurnProblemRoot problem={problem} onRetry={() => {}} />);
      const disclosure = screen.getByRole("button", { name: "What the provider said" });
      expect(disclosure).toHaveAttribute("aria-expanded", "false");
      expect(screen.queryByText(/upstream timed out/)).toBeNull();
      await user.tab();
      expect(disclosure).toHaveFocus();
      await user.keyboard("{Enter}");
      expect(disclosure).toHaveAttribute("aria-expanded", "true");
      expect(screen.getByText("<script>alert(1)</script> upstream timed out")).toBeInTheDocument();
      expect(document.querySelector("script")).toBeNull();
    });

    it("should render no disclosure when the provider said nothing", () => {
      render(<TurnProblemRoot problem={problems.auth} onOpenSettings={() => {}} />);
      expect(screen.queryByRole("button", { name: "What the provider said" })).toBeNull();
    });
  });

  describe("given rate-limited with a wait", () => {
    it("should count down, then let the person try again", async () => {
      vi.useFakeTimers();
      const onRetry = vi.fn();
      render(<TurnProblemRoot problem={problems["rate-limited"]} onRetry={onRetry} />);
      expect(screen.getByRole("button", { name: "Try again in 3 s" })).toBeDisabled();
      act(() => vi.advanceTimersByTime(1000));
      expect(screen.getByRole("button", { name: "Try again in 2 s" })).toBeDisabled();
      act(() => vi.advanceTimersByTime(2000));
      const button = screen.getByRole("button", { name: "Try again" });
      expect(button).toBeEnabled();
      act(() => button.click());
      expect(onRetry).toHaveBeenCalledTimes(1);
    });
  });

  describe("given settings steps", () => {
    it.each([
      ["auth", "Check the provider settings", "provider"],
      ["quota", "Open billing", "billing"],
    ] as const)("should name and open the %s section", async (kind, label, section) => {
      const user = userEvent.setup();
      const onOpenSettings = vi.fn();
      render(<TurnProblemRoot problem={problems[kind]} onOpenSettings={onOpenSettings} />);
      await user.click(screen.getByRole("button", { name: label }));
      expect(onOpenSettings).toHaveBeenCalledWith(section);
    });
  });

  describe("composed from parts with className, ref and asChild", () => {
    it("should pass them through and let the consumer's click handler prevent the step", async () => {
      const user = userEvent.setup();
      const rootRef = createRef<HTMLDivElement>();
      const actionRef = createRef<HTMLButtonElement>();
      const onRetry = vi.fn();
      render(
        <TurnProblemRoot problem={problems.offline} onRetry={onRetry} asChild className="card" ref={rootRef}>
          <article>
            <TurnProblemTitle asChild>
              <h3>Custom title</h3>
            </TurnProblemTitle>
            <TurnProblemDescription className="why" />
            <TurnProblemDetails />
            <TurnProblemAction className="go" ref={actionRef} onClick={(event) => event.preventDefault()} />
          </article>
        </TurnProblemRoot>,
      );
      expect(rootRef.current?.tagName).toBe("ARTICLE");
      expect(rootRef.current).toHaveClass("card");
      expect(screen.getByRole("group", { name: "Custom title" })).toBe(rootRef.current);
      expect(screen.getByRole("heading", { level: 3 })).toHaveTextContent("Custom title");
      expect(document.querySelector(".why")).toHaveTextContent("The provider did not answer.");
      expect(actionRef.current).toHaveClass("go");
      await user.click(actionRef.current as HTMLButtonElement);
      expect(onRetry).not.toHaveBeenCalled();
    });
  });

  describe("in a conversation", () => {
    it("should give the provider's onNewChat the message", async () => {
      const user = userEvent.setup();
      const onNewChat = vi.fn();
      const engine = createMockEngine({
        turns: { problem: { kind: "too-long", title: "Too long", next: { type: "new-chat", message: "huge paste" } } },
      });
      render(
        <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()} onNewChat={onNewChat}>
          <TurnProblemRoot />
        </ConversationProvider>,
      );
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 0, text: "huge paste" }).done;
      });
      await user.click(await screen.findByRole("button", { name: "Start a new chat with this message" }));
      expect(onNewChat).toHaveBeenCalledWith("huge paste");
    });
  });
});

describe.each(enginesUnderTest)("TurnProblem in a conversation on %s", (_name, makeEngine) => {
  it("should show the chat's problem and try again with the person's words through the provider", async () => {
    const user = userEvent.setup();
    const under = await makeEngine([{ reply: "", problem: "offline" }, { reply: "Back." }]);
    closers.push(() => under.close?.() ?? Promise.resolve());
    const { engine } = under;
    render(
      <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
        <Sender />
        <TurnProblemRoot />
      </ConversationProvider>,
    );
    await user.click(await screen.findByRole("button", { name: "send" }));
    await user.click(await screen.findByRole("button", { name: "Try again" }));
    await waitFor(() => expect(screen.queryByRole("group")).toBeNull());
    // The same words were answered: one message of the person's, then the answer.
    await waitFor(async () => {
      const chat = await engine.loadChat("c");
      expect(chat.messages.map((message) => [message.role, messageText(message)])).toEqual([
        ["user", "are you there?"],
        ["assistant", "Back."],
      ]);
    });
  });
});
