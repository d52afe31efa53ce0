"use client";
import type { CompactResult } from "@conch/engine-client";
import { Command } from "cmdk";
import { type ComponentPropsWithoutRef, forwardRef, type ReactNode, useEffect, useId, useState } from "react";
import {
  type CompactUnavailableReason,
  type Conversation,
  useConversation,
  useNacreMessages,
} from "../conversation.js";
import { useControllableState } from "../internal/use-controllable-state.js";
import type { CommandMessages, NacreMessages } from "../messages.js";

/** The ⌘K action's English strings; replace any through `NacreMessages` (the `messages` prop), as every other. */
export const defaultCommandMessages: CommandMessages = {
  compactCommand: "Summarise the start of this chat",
  compactUnavailable: "This chat's engine does not summarise",
  compactNothingToFold: "Nothing to summarise yet",
  compactAllFolded: "Everything before the last message is already summarised",
  compactBusy: "Wait until the answer is finished",
  commandMenuLabel: "Command menu",
  commandMenuPlaceholder: "Type a command…",
  commandMenuEmpty: "No command matches.",
  commandMenuGroup: "This chat",
};

/** The ⌘K action's strings: the host's, else the defaults. */
function commandMessagesOf(messages: NacreMessages): CommandMessages {
  const resolved = { ...defaultCommandMessages };
  for (const key of Object.keys(resolved) as (keyof CommandMessages)[]) {
    const replaced = messages[key];
    if (replaced !== undefined) resolved[key] = replaced;
  }
  return resolved;
}

/** The ⌘K action's strings of the nearest provider, defaults filled in. */
function useCommandMessages(): CommandMessages {
  return commandMessagesOf(useNacreMessages());
}

export function compactUnavailableText(messages: NacreMessages, reason: CompactUnavailableReason): string {
  const strings = commandMessagesOf(messages);
  switch (reason) {
    case "no-context":
      return strings.compactUnavailable;
    case "nothing-to-fold":
    case "loading":
      return strings.compactNothingToFold;
    case "all-folded":
      return strings.compactAllFolded;
    case "busy":
      return strings.compactBusy;
    default:
      return reason satisfies never;
  }
}

/** What the ⌘K action offers: whether it is disabled and why, and how to run it. */
export function compactActionOf(conversation: Conversation) {
  const reason = conversation.compactUnavailable;
  const compact = conversation.compact;
  return {
    disabled: reason !== null || !compact,
    reason,
    run: (keep?: string): Promise<CompactResult> | null => (reason === null && compact ? compact(keep) : null),
  };
}

export interface CompactCommandItemProps
  extends Omit<ComponentPropsWithoutRef<typeof Command.Item>, "onSelect" | "value" | "disabled"> {
  /** What the summary should keep above all. */
  keep?: string;
  /** Called after the item was chosen, with the fold's promise (close a palette here). */
  onSelect?: (result: Promise<CompactResult>) => void;
  /** The item's value for cmdk's filter. Default: the label. */
  value?: string;
}

/**
 * "Summarise the start of this chat", a cmdk `Command.Item` for a palette the app already has. Disabled,
 * with the reason in the item (and as its description), when the engine does not declare `context`, there
 * is nothing to fold yet, or a turn runs. `data-nacre-compact-command`, cmdk's `data-disabled`/`data-selected`.
 */
export const CompactCommandItem = forwardRef<HTMLDivElement, CompactCommandItemProps>(function CompactCommandItem(
  { keep, onSelect, value, keywords, children, ...props },
  ref,
) {
  const conversation = useConversation();
  const messages = useNacreMessages();
  const strings = commandMessagesOf(messages);
  const action = compactActionOf(conversation);
  const reasonId = useId();
  const reasonText = action.reason ? compactUnavailableText(messages, action.reason) : null;
  return (
    <Command.Item
      data-nacre-compact-command=""
      {...(action.reason ? { "data-reason": action.reason } : {})}
      value={value ?? strings.compactCommand}
      keywords={keywords ?? ["compact", "summarize", "summary", "fold", "context", "memory", "/compact"]}
      disabled={action.disabled}
      aria-describedby={reasonText ? reasonId : undefined}
      {...props}
      onSelect={() => {
        const result = action.run(keep);
        if (result) onSelect?.(result);
      }}
      ref={ref}
    >
      {children ?? (
        <>
          <span data-nacre-compact-command-label="">{strings.compactCommand}</span>
          {reasonText ? (
            <span id={reasonId} data-nacre-compact-command-reason="">
              {reasonText}
            </span>
          ) : null}
        </>
      )}
    </Command.Item>
  );
});
CompactCommandItem.displayName = "CompactCommandItem";

export interface CommandMenuProps {
  /** Controlled open state. */
  open?: boolean;
  /** Default false. */
  defaultOpen?: boolean;
  onOpenChange?: (open: boolean) => void;
  /** Open and close on ⌘K / Ctrl+K. Default true. */
  shortcut?: boolean;
  /** The app's own items and groups, after the chat's. */
  children?: ReactNode;
  /** Class of the dialog's content. */
  className?: string;
  /** Class of the overlay. */
  overlayClassName?: string;
  /** Where the dialog portals to. Default: `document.body`. */
  container?: HTMLElement;
}

/** Whether a key event is ⌘K (macOS) or Ctrl+K. */
export function isCommandMenuShortcut(
  event: Pick<KeyboardEvent, "key" | "metaKey" | "ctrlKey" | "altKey" | "shiftKey">,
) {
  return (event.metaKey || event.ctrlKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === "k";
}

/** Whether this is an Apple platform, where the menu's shortcut is ⌘K (elsewhere Ctrl+K). */
export function isApplePlatform(): boolean {
  if (typeof navigator === "undefined") return false;
  const platform =
    (navigator as Navigator & { userAgentData?: { platform?: string } }).userAgentData?.platform ?? navigator.platform;
  return /mac|iphone|ipad|ipod/i.test(platform);
}

/** The command menu's shortcut as this platform prints it: "⌘K" on Apple platforms, "Ctrl+K" elsewhere. */
export function commandMenuShortcutLabel(apple: boolean = isApplePlatform()): string {
  return apple ? "⌘K" : "Ctrl+K";
}

/**
 * The command menu's shortcut for this platform, in a `<kbd>` (`data-nacre-command-menu-shortcut`): print it
 * wherever the app says how to open the menu. Empty on the server's render, filled once in the browser.
 */
export function CommandMenuShortcut(props: ComponentPropsWithoutRef<"kbd">) {
  const [label, setLabel] = useState("");
  useEffect(() => setLabel(commandMenuShortcutLabel()), []);
  return (
    <kbd data-nacre-command-menu-shortcut="" {...props}>
      {props.children ?? label}
    </kbd>
  );
}
CommandMenuShortcut.displayName = "CommandMenuShortcut";

/**
 * A ready command palette (cmdk `Command.Dialog`) that opens on ⌘K / Ctrl+K and offers
 * "Summarise the start of this chat", plus the app's own items; it prints its shortcut for this platform
 * (`CommandMenuShortcut`). Escape closes it.
 * `open`/`defaultOpen`/`onOpenChange`; `data-nacre-command-menu` on the palette.
 */
export function CommandMenu({
  open: openProp,
  defaultOpen = false,
  onOpenChange,
  shortcut = true,
  children,
  className,
  overlayClassName,
  container,
}: CommandMenuProps) {
  const messages = useCommandMessages();
  const [open, setOpen] = useControllableState({ prop: openProp, defaultProp: defaultOpen, onChange: onOpenChange });

  useEffect(() => {
    if (!shortcut) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.repeat || !isCommandMenuShortcut(event)) return;
      event.preventDefault();
      setOpen((current) => !current);
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [shortcut, setOpen]);

  return (
    <Command.Dialog
      open={open}
      onOpenChange={setOpen}
      label={messages.commandMenuLabel}
      data-nacre-command-menu=""
      vimBindings={false}
      loop
      {...(className ? { contentClassName: className } : {})}
      {...(overlayClassName ? { overlayClassName } : {})}
      {...(container ? { container } : {})}
    >
      <div data-nacre-command-menu-header="">
        <Command.Input placeholder={messages.commandMenuPlaceholder} aria-label={messages.commandMenuPlaceholder} />
        {shortcut ? <CommandMenuShortcut aria-hidden="true" /> : null}
      </div>
      <Command.List>
        <Command.Empty>{messages.commandMenuEmpty}</Command.Empty>
        <Command.Group heading={messages.commandMenuGroup}>
          <CompactCommandItem onSelect={() => setOpen(false)} />
        </Command.Group>
        {children}
      </Command.List>
    </Command.Dialog>
  );
}
CommandMenu.displayName = "CommandMenu";
