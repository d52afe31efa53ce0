import type { Engine } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { enginesUnderTest } from "@conch/fake-provider";
import { QueryClient } from "@tanstack/react-query";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { Command } from "cmdk";
import { type ReactNode, useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConversationProvider } from "../conversation.js";
import {
  CommandMenu,
  CompactCommandItem,
  commandMenuShortcutLabel,
  defaultCommandMessages,
  isCommandMenuShortcut,
} from "./command.js";

function threeTurnLog() {
  return chatLogFrom([
    ["a", "A"],
    ["b", "B"],
    ["c", "C"],
  ]);
}

function threeTurns() {
  return createMockEngine({ chats: { c: { messages: threeTurnLog() } } });
}

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

function ControlledMenu({ onOpenChange }: { onOpenChange: (open: boolean) => void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Commands
      </button>
      <CommandMenu open={open} onOpenChange={onOpenChange} />
    </>
  );
}

describe("CommandMenu", () => {
  describe.each([
    ["⌘K", "{Meta>}k{/Meta}"],
    ["Ctrl+K", "{Control>}k{/Control}"],
  ])("when %s is pressed", (_name, keys) => {
    it("should open the palette with the input focused, and close it on the same keys", async () => {
      const user = userEvent.setup();
      renderIn(threeTurns(), <CommandMenu />);
      expect(screen.queryByRole("dialog")).toBeNull();
      await user.keyboard(keys);
      const dialog = await screen.findByRole("dialog", { name: "Command menu" });
      expect(dialog).toBeInTheDocument();
      await waitFor(() => expect(screen.getByRole("combobox")).toHaveFocus());
      await user.keyboard(keys);
      await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    });
  });

  describe.each([
    ["an Apple platform", "MacIntel", "⌘K"],
    ["an iPad", "iPad", "⌘K"],
    ["Linux", "Linux x86_64", "Ctrl+K"],
    ["Windows", "Win32", "Ctrl+K"],
  ])("on %s", (_name, platform, label) => {
    it(`should print its shortcut as ${label}`, async () => {
      vi.spyOn(navigator, "platform", "get").mockReturnValue(platform);
      try {
        expect(commandMenuShortcutLabel()).toBe(label);
        renderIn(threeTurns(), <CommandMenu defaultOpen />);
        const dialog = await screen.findByRole("dialog", { name: "Command menu" });
        expect(dialog.querySelector("[data-nacre-command-menu-shortcut]")).toHaveTextContent(label);
      } finally {
        vi.restoreAllMocks();
      }
    });
  });

  describe("when Escape is pressed in the open palette", () => {
    it("should close it and report the change", async () => {
      const user = userEvent.setup();
      const onOpenChange = vi.fn();
      renderIn(threeTurns(), <CommandMenu defaultOpen onOpenChange={onOpenChange} />);
      await screen.findByRole("dialog");
      await user.keyboard("{Escape}");
      await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
      expect(onOpenChange).toHaveBeenLastCalledWith(false);
    });
  });

  describe("when the person types and chooses the action with Enter", () => {
    it("should find it by the keyword compact too", async () => {
      const user = userEvent.setup();
      renderIn(threeTurns(), <CommandMenu defaultOpen />);
      await user.type(await screen.findByRole("combobox"), "compact");
      expect(screen.getByRole("option", { name: /Summarise the start of this chat/ })).toBeInTheDocument();
      await user.clear(screen.getByRole("combobox"));
      await user.type(screen.getByRole("combobox"), "zzzz");
      expect(screen.getByText("No command matches.")).toBeInTheDocument();
    });
  });

  describe("given the host replaces some of its strings", () => {
    it("should show the host's strings and the defaults for the rest", async () => {
      render(
        <ConversationProvider
          engine={threeTurns()}
          chatId="c"
          queryClient={new QueryClient()}
          messages={{ commandMenuLabel: "Befehle", compactCommand: "Anfang zusammenfassen" }}
        >
          <CommandMenu defaultOpen />
        </ConversationProvider>,
      );
      expect(await screen.findByRole("dialog", { name: "Befehle" })).toBeInTheDocument();
      expect(await screen.findByRole("option", { name: /Anfang zusammenfassen/ })).toBeInTheDocument();
      expect(screen.getByRole("combobox")).toHaveAttribute(
        "placeholder",
        defaultCommandMessages.commandMenuPlaceholder,
      );
      expect(screen.getByText(defaultCommandMessages.commandMenuGroup)).toBeInTheDocument();
    });
  });

  describe("given it is controlled", () => {
    it("should open only through the prop and report the shortcut", async () => {
      const user = userEvent.setup();
      const onOpenChange = vi.fn();
      renderIn(threeTurns(), <ControlledMenu onOpenChange={onOpenChange} />);
      await user.keyboard("{Control>}k{/Control}");
      expect(onOpenChange).toHaveBeenCalledWith(true);
      expect(screen.queryByRole("dialog")).toBeNull();
      await user.click(screen.getByRole("button", { name: "Commands" }));
      expect(await screen.findByRole("dialog")).toBeInTheDocument();
    });
  });

  describe("given shortcut={false}", () => {
    it("should not listen to ⌘K", async () => {
      const user = userEvent.setup();
      renderIn(threeTurns(), <CommandMenu shortcut={false} />);
      await user.keyboard("{Meta>}k{/Meta}");
      expect(screen.queryByRole("dialog")).toBeNull();
    });
  });
});

describe("CompactCommandItem", () => {
  describe("given an engine without context", () => {
    it("should be disabled, say why, and do nothing when chosen", async () => {
      const user = userEvent.setup();
      const onSelect = vi.fn();
      renderIn(
        createMockEngine({
          context: false,
          chats: {
            c: {
              messages: chatLogFrom([
                ["a", "A"],
                ["b", "B"],
              ]),
            },
          },
        }),
        <Command label="Palette">
          <Command.Input aria-label="Search" />
          <Command.List>
            <CompactCommandItem onSelect={onSelect} />
          </Command.List>
        </Command>,
      );
      const option = screen.getByRole("option", { name: /Summarise the start of this chat/ });
      expect(option).toHaveAttribute("aria-disabled", "true");
      expect(option).toHaveAccessibleDescription("This chat's engine does not summarise");
      await user.click(option);
      expect(onSelect).not.toHaveBeenCalled();
    });
  });

  describe("given nothing to fold yet", () => {
    it("should be disabled with that reason", async () => {
      renderIn(
        createMockEngine({ chats: { c: { messages: chatLogFrom([["a", "A"]]) } } }),
        <Command label="Palette">
          <Command.List>
            <CompactCommandItem />
          </Command.List>
        </Command>,
      );
      const option = await screen.findByRole("option");
      await waitFor(() => expect(option).toHaveAccessibleDescription("Nothing to summarise yet"));
      expect(option).toHaveAttribute("data-reason", "nothing-to-fold");
      expect(option).toHaveAttribute("data-disabled", "true");
    });
  });

  describe("in the app's own palette, with what to keep", () => {
    it("should fold with keep when clicked and hand the result to onSelect", async () => {
      const user = userEvent.setup();
      const engine = threeTurns();
      const onSelect = vi.fn();
      renderIn(
        engine,
        <Command label="Palette">
          <Command.List>
            <CompactCommandItem keep="the names" onSelect={onSelect} className="mine" />
          </Command.List>
        </Command>,
      );
      const option = await screen.findByRole("option");
      await waitFor(() => expect(option).toHaveAttribute("aria-disabled", "false"));
      expect(option).toHaveClass("mine");
      await user.click(option);
      expect(engine.compactCalls).toEqual([{ chatId: "c", keep: "the names" }]);
      await expect(onSelect.mock.calls[0]?.[0]).resolves.toMatchObject({ status: "compacted" });
    });
  });
});

describe("isCommandMenuShortcut", () => {
  it.each([
    [{ key: "k", metaKey: true, ctrlKey: false, altKey: false, shiftKey: false }, true],
    [{ key: "K", metaKey: false, ctrlKey: true, altKey: false, shiftKey: false }, true],
    [{ key: "k", metaKey: false, ctrlKey: false, altKey: false, shiftKey: false }, false],
    [{ key: "k", metaKey: true, ctrlKey: false, altKey: false, shiftKey: true }, false],
    [{ key: "j", metaKey: true, ctrlKey: false, altKey: false, shiftKey: false }, false],
  ])("should tell %o → %s", (event, expected) => {
    expect(isCommandMenuShortcut(event)).toBe(expected);
  });
});

describe.each(enginesUnderTest)("CommandMenu in a conversation on %s", (_name, makeEngine) => {
  it("should fold the start of the chat when the action is chosen with Enter, and close the palette", async () => {
    const user = userEvent.setup();
    const under = await makeEngine([], { chats: { c: threeTurnLog() } });
    closers.push(() => under.close?.() ?? Promise.resolve());
    const { engine } = under;
    renderIn(engine, <CommandMenu defaultOpen />);
    const option = await screen.findByRole("option", { name: "Summarise the start of this chat" });
    await waitFor(() => expect(option).toHaveAttribute("aria-disabled", "false"));
    await user.type(screen.getByRole("combobox"), "summ");
    await user.keyboard("{Enter}");
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    await waitFor(async () => expect((await engine.loadChat("c")).summary?.reason).toBe("manual"));
  });
});
