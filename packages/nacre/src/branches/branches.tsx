"use client";
import { type ChatMessage, type ConversationMessage, type MessageSiblings, messageText } from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import {
  type ComponentPropsWithoutRef,
  createContext,
  type FormEvent,
  forwardRef,
  type KeyboardEvent,
  memo,
  useContext,
  useMemo,
  useState,
} from "react";
import { ComposerInput, ComposerRoot, type ComposerRootProps } from "../composer.js";
import { useConversationStore, useNacreMessages } from "../conversation.js";
import { NacreOutsideProviderError } from "../errors.js";
import { composeEventHandlers } from "../internal/primitives.js";
import { Message, MessageActions, MessageContent, MessageCopy, type MessageProps, useMessage } from "../message.js";
import type { RenderMessage } from "../message-list.js";
import type { BranchMessages, NacreMessages } from "../messages.js";

/** The versions' English strings; replace any through `NacreMessages` (the `messages` prop), as every other. */
export const defaultBranchMessages: BranchMessages = {
  messageEdit: "Edit",
  messageRegenerate: "Regenerate",
  messageEditLabel: "Edit message",
  messageEditSave: "Send",
  messageEditCancel: "Cancel",
  branchPickerLabel: "Versions",
  branchPrevious: "Previous version",
  branchNext: "Next version",
  branchCount: ({ index, count }) => `${index + 1} / ${count}`,
  branchCountLabel: ({ index, count }) => `Version ${index + 1} of ${count}`,
};

function branchMessagesOf(messages: NacreMessages): BranchMessages {
  const resolved = { ...defaultBranchMessages };
  for (const key of Object.keys(resolved) as (keyof BranchMessages)[]) {
    const replaced = messages[key];
    // biome-ignore lint/suspicious/noExplicitAny: one key's type at a time, the same on both sides
    if (replaced !== undefined) (resolved as any)[key] = replaced;
  }
  return resolved;
}

/** The versions' strings of the nearest provider, defaults filled in. */
function useBranchMessages(): BranchMessages {
  const messages = useNacreMessages();
  return useMemo(() => branchMessagesOf(messages), [messages]);
}

/** A message's versions, when it came from `useConversation()` and has others; else null. */
export function siblingsOf(message: ChatMessage | null): MessageSiblings | null {
  const siblings = (message as ConversationMessage | null)?.siblings;
  // A snapshot's own message carries its versions' seqs; only the conversation's can select one.
  return siblings && !Array.isArray(siblings) ? siblings : null;
}

/** Whether the message's row shows the editor in place of its text. */
interface MessageEditing {
  readonly editing: boolean;
  setEditing(editing: boolean): void;
}

const MessageEditingContext = createContext<MessageEditing | null>(null);

function useMessageEditing(part: string): MessageEditing {
  const editing = useContext(MessageEditingContext);
  if (!editing) throw new NacreOutsideProviderError(`<${part}>`, "<BranchMessage>");
  return editing;
}

export interface BranchMessageProps extends MessageProps {}

/**
 * A `Message` with its versions: the text (or, after Edit, the editor in its place), `MessageActions` with
 * Copy, Edit (a person's message) and Regenerate (an answer), and the `BranchPicker` when it has other
 * versions. Give the list `renderMessage={renderBranchMessage}`, or compose your own row from these parts.
 */
export const BranchMessage = memo(
  forwardRef<HTMLLIElement, BranchMessageProps>(function BranchMessage({ message, children, ...props }, ref) {
    const [editing, setEditing] = useState(false);
    const value = useMemo(() => ({ editing, setEditing }), [editing]);
    return (
      <Message message={message} {...props} {...(editing ? { "data-editing": "" } : {})} ref={ref}>
        <MessageEditingContext.Provider value={value}>
          {children ??
            (editing ? (
              <MessageEditor />
            ) : (
              <>
                <MessageContent {...(props.renderText ? { renderText: props.renderText } : {})} />
                <MessageActions>
                  <MessageCopy />
                  <MessageEdit />
                  <MessageRegenerate />
                </MessageActions>
                <BranchPickerRoot />
              </>
            ))}
        </MessageEditingContext.Provider>
      </Message>
    );
  }),
);
BranchMessage.displayName = "BranchMessage";

/** `MessageList`'s `renderMessage` for rows with versions: each message a `BranchMessage`. */
export const renderBranchMessage: RenderMessage = ({ message, folded }) => (
  <BranchMessage message={message} folded={folded} />
);

export interface MessageEditProps extends ComponentPropsWithoutRef<"button"> {}

/**
 * Opens the editor in place of a person's message (nothing for another role, or on an engine without
 * `branches`). Inside a `BranchMessage`.
 * `data-nacre-message-edit`.
 */
export const MessageEdit = forwardRef<HTMLButtonElement, MessageEditProps>(function MessageEdit(
  { children, onClick, ...props },
  ref,
) {
  const message = useMessage();
  const editing = useMessageEditing("MessageEdit");
  const store = useConversationStore();
  const strings = useBranchMessages();
  // An engine without versions could only cut its log: nothing to offer.
  if (message?.role !== "user" || !store.engine.capabilities.branches) return null;
  return (
    <button
      type="button"
      data-nacre-message-edit=""
      {...props}
      onClick={composeEventHandlers(onClick, () => editing.setEditing(true))}
      ref={ref}
    >
      {children ?? strings.messageEdit}
    </button>
  );
});
MessageEdit.displayName = "MessageEdit";

export interface MessageRegenerateProps extends ComponentPropsWithoutRef<"button"> {}

/**
 * Asks for another answer to the person's message an answer replies to: a new version beside it (nothing for
 * another role, or on an engine without `branches`). Inside a `Message`. `data-nacre-message-regenerate`.
 */
export const MessageRegenerate = forwardRef<HTMLButtonElement, MessageRegenerateProps>(function MessageRegenerate(
  { children, onClick, ...props },
  ref,
) {
  const message = useMessage();
  const store = useConversationStore();
  const strings = useBranchMessages();
  if (message?.role !== "assistant" || !store.engine.capabilities.branches) return null;
  return (
    <button
      type="button"
      data-nacre-message-regenerate=""
      {...props}
      // A refusal (a turn running, an engine without branches) is the conversation's `error`.
      onClick={composeEventHandlers(onClick, () => void store.regenerate(message.seq).catch(() => undefined))}
      ref={ref}
    >
      {children ?? strings.messageRegenerate}
    </button>
  );
});
MessageRegenerate.displayName = "MessageRegenerate";

export interface MessageEditorProps extends Omit<ComposerRootProps, "editSeq" | "defaultValue"> {}

/**
 * The Composer in place of a person's message, its text to change: Send makes the new version and answers it,
 * Cancel (or Escape) puts the message back. Inside a `BranchMessage`. `data-nacre-message-editor`.
 */
export const MessageEditor = forwardRef<HTMLFormElement, MessageEditorProps>(function MessageEditor(
  { children, onKeyDown, onSubmit, ...props },
  ref,
) {
  const message = useMessage();
  const editing = useMessageEditing("MessageEditor");
  const strings = useBranchMessages();
  if (!message) return null;
  const close = () => editing.setEditing(false);
  return (
    <ComposerRoot
      data-nacre-message-editor=""
      editSeq={message.seq}
      defaultValue={messageText(message)}
      {...props}
      onKeyDown={composeEventHandlers(onKeyDown, (event: KeyboardEvent<HTMLFormElement>) => {
        if (event.key === "Escape") close();
      })}
      // The new version replaces this row as its turn starts; closing now puts nothing back in between.
      onSubmit={composeEventHandlers(onSubmit, (_event: FormEvent<HTMLFormElement>) => close())}
      ref={ref}
    >
      {children ?? (
        <>
          <ComposerInput aria-label={strings.messageEditLabel} autoFocus />
          <div data-nacre-message-editor-actions="">
            <button type="submit">{strings.messageEditSave}</button>
            <button type="button" onClick={close}>
              {strings.messageEditCancel}
            </button>
          </div>
        </>
      )}
    </ComposerRoot>
  );
});
MessageEditor.displayName = "MessageEditor";

const SiblingsContext = createContext<MessageSiblings | null>(null);

function useSiblings(part: string): MessageSiblings {
  const siblings = useContext(SiblingsContext);
  if (!siblings) throw new NacreOutsideProviderError(`<BranchPicker.${part}>`, "<BranchPicker.Root>");
  return siblings;
}

/**
 * Selects another version; once the list shows it (its row is another message), the same button of that row's
 * picker takes the focus, so that a keyboard goes on through the versions.
 */
function selectAndRefocus(siblings: MessageSiblings, index: number, button: HTMLElement, part: string): void {
  const versions = siblings.seqs.join(" ");
  void siblings.select(index).then(
    () => {
      // The row is re-rendered when React gets to it: on a loaded page that can take a while.
      const until = performance.now() + 5_000;
      const refocus = () => {
        // Until the row of the version chosen replaces this one (a row that stays keeps its focus).
        if (button.isConnected) {
          if (performance.now() < until) requestAnimationFrame(refocus);
          return;
        }
        const picker = document.querySelector(`[data-nacre-branch-picker][data-versions="${versions}"]`);
        // The same button, or the other one when that is disabled now (the first or the last version).
        const next =
          picker?.querySelector<HTMLElement>(`[${part}]:not(:disabled)`) ??
          picker?.querySelector("button:not(:disabled)");
        if (next) next.focus();
        else if (performance.now() < until) requestAnimationFrame(refocus);
      };
      requestAnimationFrame(refocus);
    },
    // A refusal (a turn running) is the conversation's `error`; the picker stays where it was.
    () => undefined,
  );
}

export interface BranchPickerRootProps extends ComponentPropsWithoutRef<"div"> {
  /** The message whose versions it moves between. Default: the `Message` around. */
  message?: ChatMessage;
  asChild?: boolean;
}

/**
 * ‹ 2 / 3 ›: moves between a message's versions (nothing when it has no other). A group named "Versions";
 * `data-nacre-branch-picker`, `data-versions` (their seqs).
 */
export const BranchPickerRoot = forwardRef<HTMLDivElement, BranchPickerRootProps>(function BranchPickerRoot(
  { message, asChild, children, ...props },
  ref,
) {
  const around = useMessage();
  const strings = useBranchMessages();
  const siblings = siblingsOf(message ?? around);
  if (!siblings) return null;
  const Component = asChild ? Slot : "div";
  return (
    <SiblingsContext.Provider value={siblings}>
      <Component
        role="group"
        aria-label={strings.branchPickerLabel}
        data-nacre-branch-picker=""
        data-versions={siblings.seqs.join(" ")}
        {...props}
        ref={ref}
      >
        {children ?? (
          <>
            <BranchPickerPrevious />
            <BranchPickerCount />
            <BranchPickerNext />
          </>
        )}
      </Component>
    </SiblingsContext.Provider>
  );
});
BranchPickerRoot.displayName = "BranchPicker.Root";

export interface BranchPickerButtonProps extends ComponentPropsWithoutRef<"button"> {}

interface StepProps extends BranchPickerButtonProps {
  readonly step: -1 | 1;
}

const BranchPickerStep = forwardRef<HTMLButtonElement, StepProps>(function BranchPickerStep(
  { step, children, onClick, ...props },
  ref,
) {
  const siblings = useSiblings(step < 0 ? "Previous" : "Next");
  const strings = useBranchMessages();
  const target = siblings.index + step;
  const disabled = target < 0 || target >= siblings.count;
  const attribute = step < 0 ? "data-nacre-branch-previous" : "data-nacre-branch-next";
  return (
    <button
      type="button"
      aria-label={step < 0 ? strings.branchPrevious : strings.branchNext}
      {...{ [attribute]: "" }}
      disabled={disabled}
      {...props}
      onClick={composeEventHandlers(onClick, (event) => {
        if (!disabled) selectAndRefocus(siblings, target, event.currentTarget, attribute);
      })}
      ref={ref}
    >
      {children ?? (step < 0 ? "‹" : "›")}
    </button>
  );
});

/** The previous version (disabled on the first). Named "Previous version". `data-nacre-branch-previous`. */
export const BranchPickerPrevious = forwardRef<HTMLButtonElement, BranchPickerButtonProps>(
  function BranchPickerPrevious(props, ref) {
    return <BranchPickerStep step={-1} {...props} ref={ref} />;
  },
);
BranchPickerPrevious.displayName = "BranchPicker.Previous";

/** The next version (disabled on the last). Named "Next version". `data-nacre-branch-next`. */
export const BranchPickerNext = forwardRef<HTMLButtonElement, BranchPickerButtonProps>(
  function BranchPickerNext(props, ref) {
    return <BranchPickerStep step={1} {...props} ref={ref} />;
  },
);
BranchPickerNext.displayName = "BranchPicker.Next";

export interface BranchPickerCountProps extends ComponentPropsWithoutRef<"span"> {}

/** "2 / 3", read out as "Version 2 of 3". `data-nacre-branch-count`. */
export const BranchPickerCount = forwardRef<HTMLSpanElement, BranchPickerCountProps>(
  function BranchPickerCount(props, ref) {
    const siblings = useSiblings("Count");
    const strings = useBranchMessages();
    const values = { index: siblings.index, count: siblings.count };
    return (
      <span data-nacre-branch-count="" {...props} ref={ref}>
        <span aria-hidden="true">{strings.branchCount(values)}</span>
        <span data-nacre-visually-hidden="">{strings.branchCountLabel(values)}</span>
      </span>
    );
  },
);
BranchPickerCount.displayName = "BranchPicker.Count";
