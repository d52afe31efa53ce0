import {
  type AssistantRuntime,
  AssistantRuntimeProvider,
  BranchPickerPrimitive,
  ComposerPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
  type ToolCallMessagePartProps,
  useAuiState,
} from "@assistant-ui/react";
import type { BranchCapability, ChatMessage, SummaryState } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { StrictMode } from "react";
import { describe, expect, it } from "vitest";
import { ConversationProvider } from "../conversation.js";
import {
  type NacreMessageCustom,
  NacreSummaryDivider,
  NacreTurnProblem,
  useNacreMessageSeq,
  useNacreRuntime,
} from "./index.js";

function ToolAnswer({ toolName, result, addResult }: ToolCallMessagePartProps) {
  if (result !== undefined) return <p>{`${toolName}: ${String(result)}`}</p>;
  return (
    <button type="button" onClick={() => addResult("4 °C, rain")}>
      {`answer ${toolName}`}
    </button>
  );
}

function Row({ role }: { role: string }) {
  const seq = useNacreMessageSeq();
  return (
    <MessagePrimitive.Root data-testid={`row-${seq}`} data-role={role}>
      <NacreSummaryDivider />
      <div data-testid="body">
        <MessagePrimitive.Parts components={{ tools: { Fallback: ToolAnswer } }} />
      </div>
      <BranchPickerPrimitive.Root hideWhenSingleBranch data-testid={`versions-${seq}`} aria-busy={useSwitching()}>
        <BranchPickerPrimitive.Previous aria-label="Previous version">‹</BranchPickerPrimitive.Previous>
        <BranchPickerPrimitive.Number /> / <BranchPickerPrimitive.Count />
        <BranchPickerPrimitive.Next aria-label="Next version">›</BranchPickerPrimitive.Next>
      </BranchPickerPrimitive.Root>
      {role === "user" ? <NacreTurnProblem /> : null}
    </MessagePrimitive.Root>
  );
}

/** Whether the person chose another version of this message and the engine has not shown it yet. */
function useSwitching(): boolean {
  return useAuiState((state) => {
    const custom = state.message.metadata.custom as Partial<NacreMessageCustom>;
    return custom.nacreSwitchingTo !== undefined;
  });
}

/** assistant-ui's own primitives, as an app builds its thread, on the Nacre runtime. */
function Thread({ onRuntime }: { onRuntime?: (runtime: AssistantRuntime) => void }) {
  const runtime = useNacreRuntime();
  onRuntime?.(runtime);
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root>
        {/* The Viewport scrolls, which jsdom cannot; the example runs it in Chromium. */}
        <ThreadPrimitive.Messages>{({ message }) => <Row role={message.role} />}</ThreadPrimitive.Messages>
        <ComposerPrimitive.Root>
          <ComposerPrimitive.Input aria-label="Message" />
          <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
          <ComposerPrimitive.Cancel>Stop</ComposerPrimitive.Cancel>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  );
}

function renderThread(
  engine: ReturnType<typeof createMockEngine>,
  onRuntime?: (runtime: AssistantRuntime) => void,
  { strict = false }: { strict?: boolean } = {},
) {
  const thread = (
    <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
      <Thread {...(onRuntime ? { onRuntime } : {})} />
    </ConversationProvider>
  );
  return render(strict ? <StrictMode>{thread}</StrictMode> : thread);
}

const said = (text: string) => [{ type: "text" as const, text }];

/** A chat whose second question was edited (4 beside 2) and whose edited question has two answers (5, 6). */
const versioned: ChatMessage[] = [
  { seq: 0, role: "user", parts: said("one") },
  { seq: 1, role: "assistant", parts: said("reply one") },
  { seq: 2, role: "user", parts: said("two") },
  { seq: 3, role: "assistant", parts: said("reply two") },
  { seq: 4, role: "user", parts: said("two, edited"), parent: 1 },
  { seq: 5, role: "assistant", parts: said("first reply to the edit") },
  { seq: 6, role: "assistant", parts: said("second reply to the edit"), parent: 4 },
];

/** Holds the engine's answers to `selectBranch` until `release()`: a slow network between a click and the branch. */
function holdBranchSwitches(engine: ReturnType<typeof createMockEngine>) {
  const capability = engine.capabilities.branches as BranchCapability;
  const answer = capability.selectBranch.bind(capability);
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const asked: number[] = [];
  capability.selectBranch = async (chatId, seq, options) => {
    asked.push(seq);
    await released;
    return answer(chatId, seq, options);
  };
  return { asked, release };
}

/** Every text each row's body showed from now on (one entry per row and change), read on each DOM change. */
function watchBodies() {
  const shown: string[] = [];
  const read = () => {
    for (const row of document.querySelectorAll("[data-testid^='row-']")) {
      shown.push(`${row.getAttribute("data-testid")}: ${row.querySelector("[data-testid='body']")?.textContent ?? ""}`);
    }
  };
  const observer = new MutationObserver(read);
  observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  read();
  return { shown, stop: () => observer.disconnect() };
}

const summary: SummaryState = {
  text: "Earlier: the person asked one and two.",
  model: "mock-small",
  firstKeptSeq: 4,
  reason: "budget",
  before: { messages: 6, tokens: 300 },
  after: { messages: 2, tokens: 80 },
  at: 0,
};

const folded = chatLogFrom([
  ["one", "reply one"],
  ["two", "reply two"],
  ["three", "reply three"],
]);

describe("useNacreRuntime in assistant-ui's thread", () => {
  describe("given a chat with a summary", () => {
    it("should show the whole log with seqs kept, and the divider once, before the first kept message", async () => {
      const engine = createMockEngine({ chats: { c: { messages: folded, summary } } });
      renderThread(engine);
      await screen.findByText("reply three");
      expect(screen.getByText("one")).toBeInTheDocument();
      const dividers = document.querySelectorAll("[data-nacre-summary-divider]");
      expect(dividers).toHaveLength(1);
      expect(screen.getByTestId("row-4")).toContainElement(dividers[0] as HTMLElement);
      await userEvent.click(within(screen.getByTestId("row-4")).getByRole("button", { expanded: false }));
      expect(await screen.findByText(summary.text)).toBeInTheDocument();
    });
  });

  describe("when the person sends from assistant-ui's composer", () => {
    it("should send a turn at the log's next seq, and show the reply", async () => {
      const engine = createMockEngine({ chats: { c: { messages: folded } }, turns: { reply: "The fourth answer." } });
      renderThread(engine);
      await screen.findByText("reply three");
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "four");
      await userEvent.click(screen.getByRole("button", { name: "Send" }));
      expect(await screen.findByText("The fourth answer.")).toBeInTheDocument();
      expect(engine.calls.map((call) => ({ seq: call.seq, text: call.text }))).toEqual([{ seq: 6, text: "four" }]);
      expect(screen.getByTestId("row-6")).toHaveTextContent("four");
      expect(screen.getByTestId("row-7")).toHaveTextContent("The fourth answer.");
    });
  });

  describe("when the person types /compact with what to keep", () => {
    it("should fold on request, not send a message", async () => {
      const engine = createMockEngine({ chats: { c: { messages: folded } } });
      renderThread(engine);
      await screen.findByText("reply three");
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "/compact the names");
      await userEvent.click(screen.getByRole("button", { name: "Send" }));
      await waitFor(() => expect(engine.compactCalls).toEqual([{ chatId: "c", keep: "the names" }]));
      expect(engine.calls).toHaveLength(0);
      await waitFor(() => expect(document.querySelectorAll("[data-nacre-summary-divider]")).toHaveLength(1));
    });
  });

  describe("when /compact cannot run (nothing to fold yet)", () => {
    it("should hand the draft back to the composer, not lose it", async () => {
      const engine = createMockEngine({ chats: { c: { messages: chatLogFrom([["one", "reply one"]]) } } });
      renderThread(engine);
      await screen.findByText("reply one");
      const box = screen.getByRole("textbox", { name: "Message" });
      await userEvent.type(box, "/compact the names");
      await userEvent.click(screen.getByRole("button", { name: "Send" }));
      await waitFor(() => expect(box).toHaveValue("/compact the names"));
      expect(engine.compactCalls).toEqual([]);
      expect(engine.calls).toEqual([]);
    });
  });

  describe("when a turn ends too long", () => {
    it("should show the card under the person's message, with its one next step", async () => {
      const engine = createMockEngine({
        chats: { c: { messages: folded } },
        turns: { problem: { kind: "too-long", title: "Too long", next: { type: "new-chat", message: "huge" } } },
      });
      renderThread(engine);
      await screen.findByText("reply three");
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "huge");
      await userEvent.click(screen.getByRole("button", { name: "Send" }));
      const card = await screen.findByRole("group", { name: "Too long" });
      expect(screen.getByTestId("row-6")).toContainElement(card);
      expect(card).toHaveAttribute("data-next", "new-chat");
      expect(document.querySelectorAll("[data-nacre-turn-problem]")).toHaveLength(1);
    });
  });

  describe("when the host answers a tool call in the thread", () => {
    it("should hand the result to the engine with sendToolResults, and the same turn goes on", async () => {
      const toolRound: ChatMessage[] = [
        { seq: 0, role: "user", parts: [{ type: "text", text: "Weather in Oslo?" }] },
        { seq: 1, role: "assistant", parts: [{ type: "tool-call", id: "call-1", name: "weather", arguments: "{}" }] },
      ];
      const engine = createMockEngine({ chats: { c: { messages: toolRound } }, turns: { reply: "It rains." } });
      renderThread(engine);
      await userEvent.click(await screen.findByRole("button", { name: "answer weather" }));
      expect(await screen.findByText("It rains.")).toBeInTheDocument();
      expect(engine.calls).toHaveLength(1);
      expect(engine.calls[0]).toMatchObject({
        seq: 2,
        toolResults: [{ type: "tool-result", callId: "call-1", name: "weather", text: "4 °C, rain" }],
      });
      expect(screen.getByText("weather: 4 °C, rain")).toBeInTheDocument();
    });
  });

  describe("given what assistant-ui could offer", () => {
    it("should offer cancel, and not edit, reload, delete or branches on an engine without branches, which would cut the log", async () => {
      const engine = createMockEngine({ branches: false, chats: { c: { messages: folded } } });
      let runtime: AssistantRuntime | undefined;
      renderThread(engine, (value) => {
        runtime = value;
      });
      await screen.findByText("reply three");
      const capabilities = runtime?.thread.getState().capabilities;
      expect(capabilities).toMatchObject({
        edit: false,
        reload: false,
        delete: false,
        switchToBranch: false,
        cancel: true,
      });
    });

    it("should edit, reload and switch branches through the runtime on an engine with branches", async () => {
      const engine = createMockEngine({
        chats: { c: { messages: folded } },
        turns: (input, call) => ({ reply: `answer ${call} to ${input.text}` }),
      });
      let runtime: AssistantRuntime | undefined;
      renderThread(engine, (value) => {
        runtime = value;
      });
      await screen.findByText("reply three");
      const thread = () => (runtime as AssistantRuntime).thread;
      expect(thread().getState().capabilities).toMatchObject({ edit: true, reload: true, switchToBranch: true });

      // Reload the last answer: another version beside it, the old one kept in the log.
      await act(async () => {
        thread().getMessageById("nacre-5").reload();
      });
      await screen.findByText("answer 0 to three");
      await waitFor(() => expect(engine.calls.at(-1)).toMatchObject({ seq: 4, retry: true }));
      const regenerated = () => thread().getMessageById("nacre-6").getState();
      await waitFor(() => expect(regenerated()).toMatchObject({ branchNumber: 2, branchCount: 2 }));

      // Edit the second person's message in assistant-ui's edit composer: a new version, answered.
      await act(async () => {
        const composer = thread().getMessageById("nacre-2").composer;
        composer.beginEdit();
        composer.setText("two, edited");
        composer.send();
      });
      await screen.findByText("answer 1 to two, edited");
      expect(engine.calls.at(-1)).toMatchObject({ seq: 7, parent: 1, text: "two, edited" });
      expect(screen.queryByText("reply three")).toBeNull();
      await waitFor(() => expect(thread().getMessageById("nacre-7").getState()).toMatchObject({ branchCount: 2 }));

      // The BranchPicker's previous: the engine's active branch goes back to the first version.
      await act(async () => {
        thread().getMessageById("nacre-7").switchToBranch({ position: "previous" });
      });
      await screen.findByText("two");
      await waitFor(async () =>
        expect((await engine.loadChat("c")).messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 6]),
      );
    });

    it("should show every version after a reload: the BranchPicker counts ‹ n / m › and moves to another", async () => {
      const engine = createMockEngine({
        chats: { c: { messages: folded } },
        turns: (input, call) => ({ reply: `answer ${call} to ${input.text}` }),
      });
      let runtime: AssistantRuntime | undefined;
      const first = renderThread(engine, (value) => {
        runtime = value;
      });
      await screen.findByText("reply three");
      // Two more answers to the last question, then an edit of the second one: versions on two levels.
      for (const call of [0, 1]) {
        const last = (await engine.loadChat("c")).messages.at(-1)?.seq as number;
        await act(async () => {
          (runtime as AssistantRuntime).thread.getMessageById(`nacre-${last}`).reload();
        });
        await screen.findByText(`answer ${call} to three`);
        await waitFor(() => expect((runtime as AssistantRuntime).thread.getState().isRunning).toBe(false));
      }
      await act(async () => {
        const composer = (runtime as AssistantRuntime).thread.getMessageById("nacre-2").composer;
        composer.beginEdit();
        composer.setText("two, edited");
        composer.send();
      });
      await screen.findByText("answer 2 to two, edited");
      await waitFor(async () => expect((await engine.loadChat("c")).messages.map((m) => m.seq)).toEqual([0, 1, 8, 9]));
      first.unmount();

      // A reload: a new page reads the chat back; assistant-ui has seen only the active branch, yet counts every version.
      renderThread(engine);
      await screen.findByText("answer 2 to two, edited");
      await waitFor(() => expect(screen.getByTestId("versions-8").textContent).toBe("‹2 / 2›"));
      expect(screen.queryByTestId("versions-9")).toBeNull();
      // ‹ goes to the first version of the second question: its branch comes back with its newest answer.
      await userEvent.click(within(screen.getByTestId("versions-8")).getByRole("button", { name: "Previous version" }));
      await screen.findByText("answer 1 to three");
      await waitFor(async () =>
        expect((await engine.loadChat("c")).messages.map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 7]),
      );
      await waitFor(() => expect(screen.getByTestId("versions-2").textContent).toBe("‹1 / 2›"));
      await waitFor(() => expect(screen.getByTestId("versions-7").textContent).toBe("‹3 / 3›"));
      // And ‹ again on the answer: the older answers, in the order the engine made them.
      await userEvent.click(within(screen.getByTestId("versions-7")).getByRole("button", { name: "Previous version" }));
      await screen.findByText("answer 0 to three");
      await waitFor(() => expect(screen.getByTestId("versions-6").textContent).toBe("‹2 / 3›"));
    });

    it("should keep the shown version, its picker busy, until the engine has made the chosen one active: no version shows blank", async () => {
      const engine = createMockEngine({ chats: { c: { messages: versioned } } });
      let runtime: AssistantRuntime | undefined;
      renderThread(engine, (value) => {
        runtime = value;
      });
      await screen.findByText("second reply to the edit");
      const held = holdBranchSwitches(engine);
      const bodies = watchBodies();

      // ‹ on the edited question: the engine is asked, and has not answered yet.
      await userEvent.click(within(screen.getByTestId("versions-4")).getByRole("button", { name: "Previous version" }));
      await waitFor(() => expect(held.asked).toEqual([2]));
      // The thread still shows the branch it had, every message with its words, in assistant-ui's own state too;
      // the picker clicked says it is busy, and assistant-ui's head stays where the thread is.
      await waitFor(() => expect(screen.getByTestId("versions-4")).toHaveAttribute("aria-busy", "true"));
      const thread = (runtime as AssistantRuntime).thread;
      expect(thread.getState().messages.map((message) => message.id)).toEqual([
        "nacre-0",
        "nacre-1",
        "nacre-4",
        "nacre-6",
      ]);
      expect(thread.getState().messages.every((message) => message.content.some((part) => part.type === "text"))).toBe(
        true,
      );
      expect(thread.export().headId).toBe("nacre-6");
      expect(screen.getByTestId("row-4")).toHaveTextContent("two, edited");

      // The engine answers: the chosen version with its words, and the answer written last on its branch.
      held.release();
      await screen.findByText("reply two");
      expect(screen.getByTestId("row-2")).toHaveTextContent("two");
      await waitFor(() => expect(screen.getByTestId("versions-2")).toHaveAttribute("aria-busy", "false"));
      expect(screen.getByTestId("versions-2").textContent).toBe("‹1 / 2›");
      bodies.stop();
      expect(bodies.shown.filter((text) => text.endsWith(": "))).toEqual([]);
    });

    it("should count and move between versions the same under React.StrictMode, a new answer streaming after the ones it joins", async () => {
      const engine = createMockEngine({
        chats: { c: { messages: versioned } },
        turns: { reply: "third reply to the edit, written slowly", delayMs: 20 },
        chunkSize: 4,
      });
      let runtime: AssistantRuntime | undefined;
      renderThread(
        engine,
        (value) => {
          runtime = value;
        },
        { strict: true },
      );
      await screen.findByText("second reply to the edit");
      await waitFor(() => expect(screen.getByTestId("versions-6").textContent).toBe("‹2 / 2›"));

      // Another answer: while it streams, the engine's branch lacks the answer it replaces, yet it counts last.
      await act(async () => {
        (runtime as AssistantRuntime).thread.getMessageById("nacre-6").reload();
      });
      await waitFor(() => expect(screen.getByTestId("row-7")).toHaveTextContent("third reply"));
      expect(screen.getByTestId("versions-7").textContent).toBe("‹3 / 3›");
      await screen.findByText("third reply to the edit, written slowly");
      await waitFor(() => expect((runtime as AssistantRuntime).thread.getState().isRunning).toBe(false));
      await waitFor(() => expect(screen.getByTestId("versions-7").textContent).toBe("‹3 / 3›"));

      // ‹ twice: the older answers, in the order the engine wrote them; › on the question's first version.
      await userEvent.click(within(screen.getByTestId("versions-7")).getByRole("button", { name: "Previous version" }));
      await screen.findByText("second reply to the edit");
      await waitFor(() => expect(screen.getByTestId("versions-6").textContent).toBe("‹2 / 3›"));
      await userEvent.click(within(screen.getByTestId("versions-6")).getByRole("button", { name: "Previous version" }));
      await screen.findByText("first reply to the edit");
      await waitFor(() => expect(screen.getByTestId("versions-5").textContent).toBe("‹1 / 3›"));
      await userEvent.click(within(screen.getByTestId("versions-4")).getByRole("button", { name: "Previous version" }));
      await screen.findByText("reply two");
      await waitFor(() => expect(screen.getByTestId("versions-2").textContent).toBe("‹1 / 2›"));
      await waitFor(async () => expect((await engine.loadChat("c")).activeLeaf).toBe(3));
    });

    it("should stop the running turn from the Stop button", async () => {
      const engine = createMockEngine({
        chats: { c: { messages: folded } },
        turns: { reply: "a long answer that streams slowly, ".repeat(20) },
        chunkSize: 1,
        delayMs: 20,
      });
      renderThread(engine);
      await screen.findByText("reply three");
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "go");
      await userEvent.click(screen.getByRole("button", { name: "Send" }));
      await waitFor(() => expect(engine.calls).toHaveLength(1));
      await act(async () => {
        await userEvent.click(await screen.findByRole("button", { name: "Stop" }));
      });
      await waitFor(() => expect(engine.calls[0]?.abortSignal?.aborted).toBe(true));
      // The thread is ready again: the next message can be sent.
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "next");
      await waitFor(() => expect(screen.getByRole("button", { name: "Send" })).toBeEnabled());
    });
  });
});
