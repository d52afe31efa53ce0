import type { ModelInfo } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { enginesUnderTest } from "@conch/fake-provider";
import { QueryClient } from "@tanstack/react-query";
import { act, fireEvent, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";

import { ContextMeterRoot } from "./context-meter.js";
import { ConversationProvider } from "./conversation.js";
import { HealthNotesRoot } from "./health-notes.js";
import { SummaryDividerRoot } from "./summary-divider.js";
import { TurnProblemRoot } from "./turn-problem.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const huge: ModelInfo = { id: "mock-huge", displayName: "Mock Huge", context: 1_000_000, ready: true, local: false };

describe("Roots inside a ConversationProvider", () => {
  describe("given a prop passed as undefined", () => {
    it("TurnProblem.Root should show the conversation's problem and keep the host's onSwitchModel", async () => {
      const user = userEvent.setup();
      const onSwitchModel = vi.fn();
      const engine = createMockEngine({
        turns: {
          problem: {
            kind: "too-long",
            title: "Too long",
            next: { type: "switch-model", model: huge, readsTimes: 31 },
          },
        },
      });
      render(
        <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()} onSwitchModel={onSwitchModel}>
          <TurnProblemRoot problem={undefined} message={undefined} onSwitchModel={undefined} />
        </ConversationProvider>,
      );
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 0, text: "a long paste" }).done;
      });
      await user.click(await screen.findByRole("button", { name: /Switch to Mock Huge/ }));
      expect(onSwitchModel).toHaveBeenCalledWith(huge, expect.objectContaining({ message: "a long paste", seq: 0 }));
    });

    it("ContextMeter.Root should read the conversation's usage", async () => {
      render(
        <ConversationProvider engine={createMockEngine()} chatId="c" queryClient={new QueryClient()}>
          <ContextMeterRoot usage={undefined} model={undefined} />
        </ConversationProvider>,
      );
      expect(await screen.findByRole("meter")).toHaveAttribute(
        "aria-valuetext",
        "2% of Mock Large's window (500 of 32,000 tokens)",
      );
    });
  });

  describe("given a prop the caller passed", () => {
    it("should win over the conversation's own, null included", async () => {
      const onSwitchModel = vi.fn();
      const own = vi.fn();
      const engine = createMockEngine({
        turns: { problem: { kind: "offline", title: "Offline", next: { type: "retry" } } },
      });
      render(
        <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()} onSwitchModel={own}>
          <TurnProblemRoot
            problem={{ kind: "model-unavailable", title: "Gone", next: { type: "switch-model", model: huge } }}
            onSwitchModel={onSwitchModel}
          />
          <ContextMeterRoot usage={null} />
          <HealthNotesRoot notes={[]} />
        </ConversationProvider>,
      );
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 0, text: "hi" }).done;
      });
      fireEvent.click(screen.getByRole("button", { name: /Switch to Mock Huge/ }));
      expect(onSwitchModel).toHaveBeenCalledOnce();
      expect(own).not.toHaveBeenCalled();
      expect(screen.getByRole("group", { name: "Gone" })).toBeInTheDocument();
      expect(screen.queryByRole("meter")).toBeNull();
      expect(screen.getByText("Nothing to report.")).toBeInTheDocument();
    });
  });
});

describe.each(enginesUnderTest)(
  "Roots inside a ConversationProvider on %s, given a prop passed as undefined",
  (_name, makeEngine) => {
    async function make(...args: Parameters<typeof makeEngine>) {
      const under = await makeEngine(...args);
      closers.push(() => under.close?.() ?? Promise.resolve());
      return under.engine;
    }

    it("SummaryDivider.Root should show the conversation's summary and model", async () => {
      const log = chatLogFrom([
        ["a", "A"],
        ["b", "B"],
        ["c", "C"],
      ]);
      const engine = await make([], { chats: { c: log } });
      render(
        <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
          <SummaryDividerRoot summary={undefined} model={undefined} />
        </ConversationProvider>,
      );
      await act(async () => {
        await engine.capabilities.context?.compact("c");
      });
      expect(await screen.findByRole("button", { name: /summarised for / })).toHaveAttribute("aria-expanded", "false");
    });

    it("HealthNotes.Root should list the conversation's notes", async () => {
      const engine = await make([{ reply: "ok", heal: true }]);
      render(
        <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
          <HealthNotesRoot notes={undefined} />
        </ConversationProvider>,
      );
      await act(async () => {
        await engine.sendTurn({ chatId: "c", seq: 0, text: "hi" }).done;
      });
      expect(await screen.findByRole("listitem")).toHaveAttribute("data-kind", "healed");
    });
  },
);
