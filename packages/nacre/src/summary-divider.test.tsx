import type { Engine, EngineEvent, EngineListener, SummaryState } from "@conch/engine-client";
import { chatLogFrom, createMockEngine, type MockChatSeed, type MockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { act, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { createRef, useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { ConversationProvider, NacreMessagesProvider } from "./conversation.js";
import { MessageListRoot } from "./message-list.js";
import { SummaryDividerContent, SummaryDividerRoot, SummaryDividerTrigger } from "./summary-divider.js";

const summary: SummaryState = {
  text: "The person wants a CSV export.\nStill open: the date format.",
  model: "mock-small",
  firstKeptSeq: 6,
  reason: "budget",
  before: { messages: 8, tokens: 2400 },
  after: { messages: 2, tokens: 520 },
  at: 0,
};

/** A mock engine holding one chat, "c". */
const engineWithChat = (chat: MockChatSeed): MockEngine => createMockEngine({ chats: { c: chat } });

/** The message list of chat "c", as a page shows it. */
function renderList(engine: Engine): void {
  render(
    <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
      <MessageListRoot />
    </ConversationProvider>,
  );
}

/**
 * The mock engine, its events to the page held from a fold's `compacting` on until `release` (a fold that takes a
 * while), and `play` to hand the page an event of a fold the engine ran elsewhere (a server's fold ahead).
 */
function heldFolds(engine: Engine) {
  const listeners = new Set<EngineListener>();
  let held: EngineEvent[] | null = null;
  let strip = false;
  const play = (event: EngineEvent) => {
    for (const listener of listeners) listener(event);
  };
  engine.subscribe((event) => {
    const passed =
      strip && event.type === "compacting" ? { type: event.type, chatId: event.chatId, reason: event.reason } : event;
    if (held) held.push(passed);
    else play(passed);
    // The fold's first word reaches the page; the rest waits for `release`.
    if (event.type === "compacting") held ??= [];
  });
  const page: Engine = new Proxy(engine, {
    get: (target, key) =>
      key === "subscribe"
        ? (listener: EngineListener) => {
            listeners.add(listener);
            return () => listeners.delete(listener);
          }
        : Reflect.get(target, key),
  });
  return {
    page,
    play,
    /** Says `compacting` as an older server does, without where the fold will cut. */
    asOlderServer: () => {
      strip = true;
    },
    release: () => {
      for (const event of held ?? []) play(event);
      held = null;
    },
  };
}

/** The seqs of the messages either side of the divider's row (null: none there). */
function dividerBetween(): [string | null, string | null] {
  const row = document.querySelector("[data-nacre-divider-row]");
  expect(row).not.toBeNull();
  const seqOf = (element: Element | null | undefined) =>
    element?.hasAttribute("data-nacre-message") ? element.getAttribute("data-seq") : null;
  return [seqOf(row?.previousElementSibling), seqOf(row?.nextElementSibling)];
}

function ControlledDivider({ onOpenChange }: { onOpenChange: (open: boolean) => void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <SummaryDividerRoot summary={summary} model="M" open={open} onOpenChange={onOpenChange} />
      <button type="button" onClick={() => setOpen(true)}>
        open it
      </button>
    </>
  );
}

describe("SummaryDivider", () => {
  describe("given a summary, closed", () => {
    it("should show one quiet line with the model's name and what it folded, as a collapsed button", () => {
      render(<SummaryDividerRoot summary={summary} model="Mock Large" foldedMessages={6} />);
      const trigger = screen.getByRole("button", { name: /Earlier messages are summarised for Mock Large/ });
      expect(trigger).toHaveAttribute("aria-expanded", "false");
      // The line says what a reader can follow; the token figure is in the opened part, beside the summary.
      expect(trigger).toHaveTextContent(/6 messages$/);
      expect(trigger).not.toHaveTextContent(/tokens/);
      expect(document.querySelector("[data-nacre-summary-divider]")).toHaveAttribute("data-state", "closed");
      expect(screen.queryByText(/CSV export/)).toBeNull();
    });
  });

  describe("given a summary whose writer's display name the engine knows", () => {
    it("should name the writer by that name", async () => {
      const user = userEvent.setup();
      render(<SummaryDividerRoot summary={{ ...summary, modelName: "Mock Small" }} model="Mock Large" />);
      await user.click(screen.getByRole("button"));
      expect(screen.getByText("Written by Mock Small")).toBeInTheDocument();
      expect(screen.getByText("Stands for about 1,880 tokens")).toBeInTheDocument();
    });
  });

  describe("when the line is clicked, or reached with Tab and opened with Enter or Space", () => {
    it("should open to the summary, rendered as text, and close again", async () => {
      const user = userEvent.setup();
      render(<SummaryDividerRoot summary={summary} model="Mock Large" />);
      const trigger = screen.getByRole("button");
      await user.click(trigger);
      expect(trigger).toHaveAttribute("aria-expanded", "true");
      expect(screen.getByText(/The person wants a CSV export/)).toBeInTheDocument();
      expect(screen.getByText("Written by mock-small")).toBeInTheDocument();
      await user.click(trigger);
      expect(trigger).toHaveAttribute("aria-expanded", "false");

      act(() => trigger.blur());
      await user.tab();
      expect(trigger).toHaveFocus();
      await user.keyboard("{Enter}");
      expect(trigger).toHaveAttribute("aria-expanded", "true");
      await user.keyboard(" ");
      expect(trigger).toHaveAttribute("aria-expanded", "false");
    });
  });

  describe("given model text with HTML in it", () => {
    it("should show the markup as text and create no element from it", async () => {
      const user = userEvent.setup();
      const hostile = { ...summary, text: '<img src=x onerror="alert(1)"><b>bold</b>' };
      render(<SummaryDividerRoot summary={hostile} model="<i>Model</i>" defaultOpen />);
      expect(screen.getByText('<img src=x onerror="alert(1)"><b>bold</b>')).toBeInTheDocument();
      expect(document.querySelector("img, b, i")).toBeNull();
      expect(screen.getByRole("button")).toHaveTextContent("summarised for <i>Model</i>");
      await user.click(screen.getByRole("button"));
    });
  });

  describe("given it is uncontrolled with defaultOpen, or controlled with open", () => {
    it("should start open and report changes; controlled, it should follow the prop only", async () => {
      const user = userEvent.setup();
      const onOpenChange = vi.fn();
      const { unmount } = render(
        <SummaryDividerRoot summary={summary} model="M" defaultOpen onOpenChange={onOpenChange} />,
      );
      expect(screen.getByRole("button")).toHaveAttribute("aria-expanded", "true");
      await user.click(screen.getByRole("button"));
      expect(onOpenChange).toHaveBeenLastCalledWith(false);
      unmount();

      const controlled = vi.fn();
      render(<ControlledDivider onOpenChange={controlled} />);
      const trigger = screen.getByRole("button", { name: /summarised/ });
      await user.click(trigger);
      expect(controlled).toHaveBeenLastCalledWith(true);
      expect(trigger).toHaveAttribute("aria-expanded", "false");
      await user.click(screen.getByRole("button", { name: "open it" }));
      expect(trigger).toHaveAttribute("aria-expanded", "true");
    });
  });

  describe("given className, ref and asChild", () => {
    it("should pass them through to the one element of each part", () => {
      const rootRef = createRef<HTMLDivElement>();
      const triggerRef = createRef<HTMLButtonElement>();
      render(
        <SummaryDividerRoot summary={summary} model="M" className="root" ref={rootRef} data-testid="root" defaultOpen>
          <SummaryDividerTrigger className="line" ref={triggerRef}>
            Memory starts here
          </SummaryDividerTrigger>
          <SummaryDividerContent asChild>
            <section aria-label="Summary">custom</section>
          </SummaryDividerContent>
        </SummaryDividerRoot>,
      );
      expect(rootRef.current).toBe(screen.getByTestId("root"));
      expect(rootRef.current).toHaveClass("root");
      expect(triggerRef.current).toHaveClass("line");
      expect(triggerRef.current).toHaveTextContent("Memory starts here");
      const region = screen.getByRole("region", { name: "Summary" });
      expect(region.tagName).toBe("SECTION");
      expect(region).toHaveAttribute("data-state", "open");
    });
  });

  describe("while a fold runs", () => {
    it("should say so, and show even before there is a first summary", () => {
      const { rerender } = render(<SummaryDividerRoot summary={summary} model="M" summarising />);
      expect(screen.getByRole("button")).toHaveTextContent("Summarising earlier messages…");
      expect(document.querySelector("[data-nacre-summary-divider]")).toHaveAttribute("data-status", "summarising");
      rerender(<SummaryDividerRoot summary={null} model="M" summarising />);
      expect(screen.getByRole("button")).toHaveTextContent("Summarising earlier messages…");
      expect(screen.getByRole("button")).toBeDisabled();
      rerender(<SummaryDividerRoot summary={null} model="M" />);
      expect(screen.queryByRole("button")).toBeNull();
    });
  });

  describe("given no model wrote a summary (turns dropped)", () => {
    it("should say the model no longer reads them and that they are all still here", async () => {
      const user = userEvent.setup();
      render(<SummaryDividerRoot summary={{ ...summary, text: "", model: null }} model="Mock Large" />);
      await user.click(screen.getByRole("button", { name: /no longer read by Mock Large/ }));
      expect(screen.getByText(/They are all still here/)).toBeInTheDocument();
    });
  });

  describe("given replaced strings", () => {
    it("should use the host's words", () => {
      render(
        <NacreMessagesProvider messages={{ summaryDividerLabel: ({ model }) => `Résumé pour ${model}` }}>
          <SummaryDividerRoot summary={summary} model="M" />
        </NacreMessagesProvider>,
      );
      expect(screen.getByRole("button")).toHaveTextContent("Résumé pour M");
    });
  });

  describe("given a fold ahead of the need that folded every message shown (the next turn keeps only its own)", () => {
    it("should stand after the last message, where the next one goes, and move before it once it is sent", async () => {
      const engine = engineWithChat({
        messages: chatLogFrom([
          ["a", "A"],
          ["b", "B"],
        ]),
        summary: {
          ...summary,
          firstKeptSeq: 4,
          before: { messages: 5, tokens: 2400 },
          after: { messages: 0, tokens: 120 },
        },
      });
      renderList(engine);
      const line = await screen.findByRole("button", { name: /summarised for Mock Large/ });
      expect(line).toHaveTextContent("4 messages");
      const row = document.querySelector("[data-nacre-divider-row]");
      expect(row?.previousElementSibling).toHaveAttribute("data-seq", "3");
      expect(row?.nextElementSibling?.hasAttribute("data-nacre-message")).not.toBe(true);
      expect(document.querySelectorAll("[data-nacre-message][data-folded]")).toHaveLength(4);
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 4, text: "c" }).done;
      });
      await waitFor(() =>
        expect(document.querySelector("[data-nacre-divider-row]")?.nextElementSibling).toHaveAttribute("data-seq", "4"),
      );
      expect(document.querySelectorAll("[data-nacre-summary-divider]")).toHaveLength(1);
    });
  });

  describe("in a conversation folded twice", () => {
    it("should show only the latest divider, before the first kept message, and every message", async () => {
      const engine = engineWithChat({
        messages: chatLogFrom([
          ["a", "A"],
          ["b", "B"],
          ["c", "C"],
          ["d", "D"],
        ]),
      });
      renderList(engine);
      await screen.findByText("D");
      await act(async () => {
        await engine.capabilities.context?.compact("c");
      });
      await screen.findByRole("button", { name: /summarised for Mock Large/ });
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 8, text: "e" }).done;
        await engine.capabilities.context?.compact("c");
      });
      await waitFor(() => expect(document.querySelectorAll("[data-nacre-summary-divider]")).toHaveLength(1));
      const divider = document.querySelector("[data-nacre-divider-row]");
      expect(divider?.nextElementSibling).toHaveAttribute("data-seq", "8");
      expect(document.querySelectorAll("[data-nacre-message]")).toHaveLength(10);
      expect(document.querySelectorAll("[data-nacre-message][data-folded]")).toHaveLength(8);
      expect(screen.getByRole("button", { name: /summarised/ })).toHaveTextContent("8 messages");
    });
  });

  describe("while a fold runs, given the engine says where it will cut", () => {
    const sixMessages = chatLogFrom([
      ["a", "A"],
      ["b", "B"],
      ["c", "C"],
    ]);
    const folded = {
      ...summary,
      firstKeptSeq: 2,
      before: { messages: 4, tokens: 2400 },
      after: { messages: 4, tokens: 900 },
    };

    function renderHeld(seed: { summary: SummaryState | null }) {
      const held = heldFolds(engineWithChat({ messages: sixMessages, ...seed }));
      renderList(held.page);
      return held;
    }

    it('should stand "Summarising…" there from the start, and the summary comes in the same place', async () => {
      const held = renderHeld({ summary: folded });
      await screen.findByRole("button", { name: /summarised for Mock Large/ });
      expect(dividerBetween()).toEqual(["1", "2"]);
      // A fold on request, a second one: it cuts at the newest turn (seq 4), not where the divider stands now.
      const compacting = held.page.capabilities.context?.compact("c");
      await screen.findByRole("button", { name: "Summarising earlier messages…" });
      expect(dividerBetween()).toEqual(["3", "4"]);
      expect(document.querySelectorAll("[data-nacre-summary-divider]")).toHaveLength(1);
      await act(async () => {
        held.release();
        await compacting;
      });
      await screen.findByRole("button", { name: /summarised for Mock Large/ });
      expect(dividerBetween()).toEqual(["3", "4"]);
      expect(document.querySelectorAll("[data-nacre-summary-divider]")).toHaveLength(1);
    });

    it("should stand after the last message when the fold (ahead of the need) folds every message shown", async () => {
      const held = renderHeld({ summary: null });
      await screen.findByText("C");
      expect(document.querySelector("[data-nacre-divider-row]")).toBeNull();
      act(() => held.play({ type: "compacting", chatId: "c", reason: "budget", firstKeptSeq: 6 }));
      await screen.findByRole("button", { name: "Summarising earlier messages…" });
      expect(dividerBetween()).toEqual(["5", null]);
      const all = {
        ...summary,
        firstKeptSeq: 6,
        before: { messages: 6, tokens: 2400 },
        after: { messages: 0, tokens: 120 },
      };
      act(() => held.play({ type: "compacted", chatId: "c", ...all }));
      await screen.findByRole("button", { name: /summarised for Mock Large/ });
      expect(dividerBetween()).toEqual(["5", null]);
      expect(document.querySelectorAll("[data-nacre-message][data-folded]")).toHaveLength(6);
    });

    it("should, from an engine that does not say, keep the line where it stood until the summary comes", async () => {
      const held = renderHeld({ summary: folded });
      held.asOlderServer();
      await screen.findByRole("button", { name: /summarised for Mock Large/ });
      const compacting = held.page.capabilities.context?.compact("c");
      await screen.findByRole("button", { name: "Summarising earlier messages…" });
      expect(dividerBetween()).toEqual(["1", "2"]);
      await act(async () => {
        held.release();
        await compacting;
      });
      await screen.findByRole("button", { name: /summarised for Mock Large/ });
      expect(dividerBetween()).toEqual(["3", "4"]);
    });
  });
});
