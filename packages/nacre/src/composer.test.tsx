import { type Engine, messageText } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { enginesUnderTest } from "@conch/fake-provider";
import { QueryClient } from "@tanstack/react-query";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { createRef, type ReactNode, useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ComposerHint, ComposerInput, ComposerRoot, ComposerSubmit, parseComposerCommand } from "./composer.js";
import { ConversationProvider } from "./conversation.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function renderIn(engine: Engine, ui: ReactNode) {
  return render(
    <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
      {ui}
    </ConversationProvider>,
  );
}

function UpperCaseComposer({ seen }: { seen: string[] }) {
  const [value, setValue] = useState("");
  return (
    <ComposerRoot
      value={value}
      onValueChange={(next) => {
        seen.push(next);
        setValue(next.toUpperCase());
      }}
    />
  );
}

describe("parseComposerCommand", () => {
  it.each([
    ["/compact", { type: "compact" }],
    ["  /compact  ", { type: "compact" }],
    ["/compact the invoice numbers", { type: "compact", keep: "the invoice numbers" }],
    ["/COMPACT names\nand dates", { type: "compact", keep: "names\nand dates" }],
    ["/compacting", null],
    ["please /compact", null],
    ["/help", null],
    ["", null],
  ])("should read %j as %j", (draft, expected) => {
    expect(parseComposerCommand(draft)).toEqual(expected);
  });
});

describe("Composer", () => {
  describe("when Shift+Enter is pressed", () => {
    it("should add a line instead of sending", async () => {
      const user = userEvent.setup();
      const engine = createMockEngine();
      renderIn(engine, <ComposerRoot />);
      const input = screen.getByRole("textbox", { name: "Message" });
      await user.type(input, "one{Shift>}{Enter}{/Shift}two");
      expect(input).toHaveValue("one\ntwo");
      expect(engine.calls).toHaveLength(0);
    });
  });

  describe("given an engine without context", () => {
    it("should keep /compact in the box and say that this engine does not summarise", async () => {
      const user = userEvent.setup();
      const engine = createMockEngine({ context: false });
      renderIn(engine, <ComposerRoot />);
      const input = screen.getByRole("textbox", { name: "Message" });
      await user.type(input, "/compact{Enter}");
      expect(await screen.findByText("This chat's engine does not summarise.")).toBeInTheDocument();
      expect(input).toHaveValue("/compact");
      expect(engine.calls).toHaveLength(0);
      await user.type(input, " x");
      expect(screen.getByText("/compact [what to keep] summarises the start of this chat now.")).toBeInTheDocument();
    });
  });

  describe("given it is controlled, or uncontrolled with a default", () => {
    it("should start with the default (a message carried into a new chat) and report changes", async () => {
      const user = userEvent.setup();
      const onValueChange = vi.fn();
      renderIn(createMockEngine(), <ComposerRoot defaultValue="carried over" onValueChange={onValueChange} />);
      const input = screen.getByRole("textbox", { name: "Message" });
      expect(input).toHaveValue("carried over");
      await user.type(input, "!");
      expect(onValueChange).toHaveBeenLastCalledWith("carried over!");
    });

    it("should follow the value prop only", async () => {
      const user = userEvent.setup();
      const seen: string[] = [];
      renderIn(createMockEngine(), <UpperCaseComposer seen={seen} />);
      await user.type(screen.getByRole("textbox", { name: "Message" }), "ab");
      expect(screen.getByRole("textbox", { name: "Message" })).toHaveValue("AB");
      expect(seen).toEqual(["a", "Ab"]);
    });
  });

  describe("composed from parts with className, ref and asChild", () => {
    it("should pass them through", async () => {
      const user = userEvent.setup();
      const engine = createMockEngine();
      const formRef = createRef<HTMLFormElement>();
      const inputRef = createRef<HTMLTextAreaElement>();
      renderIn(
        engine,
        <ComposerRoot className="form" ref={formRef} aria-label="Write">
          <label htmlFor="box">Your words</label>
          <ComposerInput id="box" className="box" ref={inputRef} />
          <ComposerHint className="hint" />
          <ComposerSubmit asChild>
            <button type="submit" className="go">
              Go
            </button>
          </ComposerSubmit>
        </ComposerRoot>,
      );
      expect(screen.getByRole("form", { name: "Write" })).toBe(formRef.current);
      expect(formRef.current).toHaveClass("form");
      expect(screen.getByRole("textbox", { name: "Your words" })).toBe(inputRef.current);
      expect(inputRef.current).toHaveClass("box");
      const go = screen.getByRole("button", { name: "Go" });
      expect(go).toHaveClass("go");
      expect(go).toHaveAttribute("data-action", "send");
      await user.type(inputRef.current as HTMLTextAreaElement, "hi");
      await user.click(go);
      await waitFor(() => expect(engine.calls).toHaveLength(1));
    });
  });
});

describe.each(enginesUnderTest)("Composer in a conversation on %s", (_name, makeEngine) => {
  async function make(...args: Parameters<typeof makeEngine>) {
    const under = await makeEngine(...args);
    closers.push(() => under.close?.() ?? Promise.resolve());
    return under.engine;
  }

  describe("when a message is typed and Enter is pressed", () => {
    it("should send it, clear the box, and show Stop while the answer streams", async () => {
      const user = userEvent.setup();
      const engine = await make([{ reply: "x ".repeat(400), slow: true }]);
      renderIn(engine, <ComposerRoot />);
      const input = screen.getByRole("textbox", { name: "Message" });
      expect(screen.getByRole("button", { name: "Send" })).toBeDisabled();
      await user.type(input, "Hello there{Enter}");
      expect(input).toHaveValue("");
      const stop = await screen.findByRole("button", { name: "Stop" });
      await user.click(stop);
      await screen.findByRole("button", { name: "Send" });
      const chat = await engine.loadChat("c");
      expect(chat.messages[0] && messageText(chat.messages[0])).toBe("Hello there");
    });
  });

  describe("when /compact with what to keep is submitted", () => {
    it("should fold with that focus, not send it as a message, and say what happened", async () => {
      const user = userEvent.setup();
      const log = chatLogFrom([
        ["a", "A"],
        ["b", "B"],
      ]);
      const engine = await make([], { chats: { c: log } });
      const compacting = vi.spyOn(engine.capabilities.context ?? { compact: () => undefined }, "compact");
      renderIn(engine, <ComposerRoot />);
      const input = screen.getByRole("textbox", { name: "Message" });
      await user.type(input, "/compact");
      expect(screen.getByText("/compact [what to keep] summarises the start of this chat now.")).toBeInTheDocument();
      expect(input).toHaveAccessibleDescription("/compact [what to keep] summarises the start of this chat now.");
      await user.type(input, " the invoice numbers");
      await user.click(screen.getByRole("button", { name: "Summarise" }));
      expect(await screen.findByText("The start of this chat is summarised.")).toBeInTheDocument();
      expect(compacting.mock.calls[0]?.slice(0, 1)).toEqual(["c"]);
      expect(compacting.mock.calls[0]?.[1]).toMatchObject({ keep: "the invoice numbers" });
      // Not sent as a message: the log is as it was.
      expect((await engine.loadChat("c")).messages).toHaveLength(log.length);

      await user.type(input, "/compact{Enter}");
      expect(
        await screen.findByText(
          "Nothing left to summarise: everything before the last message is already in the summary.",
        ),
      ).toBeInTheDocument();
    });
  });
});
