"use client";
import { Slot } from "@radix-ui/react-slot";
import { type ComponentPropsWithoutRef, forwardRef, type MouseEvent, useContext } from "react";
import { useConversation, useNacreMessages } from "./conversation.js";
import { composeEventHandlers } from "./internal/primitives.js";
import { MessageListContext, MessageListPinnedContext } from "./message-list-control.js";

export interface MessageListJumpProps extends ComponentPropsWithoutRef<"button"> {
  asChild?: boolean;
  /** Render even when there is nowhere to jump (then `data-state="hidden"` and `hidden`), e.g. to animate it. */
  forceMount?: boolean;
}

/**
 * "Jump to latest": shown while the reader is scrolled up from the end; brings them back and follows new
 * text again. Inside `MessageList.Root`. `data-nacre-jump-to-latest`, `data-state="visible|hidden"`.
 */
export const MessageListJumpToLatest = forwardRef<HTMLButtonElement, MessageListJumpProps>(
  function MessageListJumpToLatest({ asChild, forceMount, children, onClick, ...props }, ref) {
    const messages = useNacreMessages();
    const list = useContext(MessageListContext);
    const pinned = useContext(MessageListPinnedContext);
    if (pinned && !forceMount) return null;
    const Component = asChild ? Slot : "button";
    return (
      <Component
        type="button"
        data-nacre-jump-to-latest=""
        data-state={pinned ? "hidden" : "visible"}
        {...(pinned ? { hidden: true } : {})}
        {...props}
        onClick={composeEventHandlers(onClick, (_event: MouseEvent<HTMLButtonElement>) => list.scrollToEnd())}
        ref={ref}
      >
        {children ?? messages.jumpToLatest}
      </Component>
    );
  },
);
MessageListJumpToLatest.displayName = "MessageList.JumpToLatest";

/**
 * "Jump to where the model's memory starts": scrolls the summary divider to the top of the view. Shown while the
 * chat has a divider; inside `MessageList.Root` (on the divider, or anywhere in the list).
 * `data-nacre-jump-to-memory-start`.
 */
export const MessageListJumpToMemoryStart = forwardRef<HTMLButtonElement, MessageListJumpProps>(
  function MessageListJumpToMemoryStart({ asChild, forceMount, children, onClick, ...props }, ref) {
    const messages = useNacreMessages();
    const list = useContext(MessageListContext);
    const { firstKeptSeq } = useConversation();
    const none = firstKeptSeq === null;
    if (none && !forceMount) return null;
    const Component = asChild ? Slot : "button";
    return (
      <Component
        type="button"
        data-nacre-jump-to-memory-start=""
        data-state={none ? "hidden" : "visible"}
        {...(none ? { hidden: true } : {})}
        {...props}
        onClick={composeEventHandlers(onClick, (_event: MouseEvent<HTMLButtonElement>) => {
          const scroller = list.scroller.current;
          if (scroller) list.holdAt(() => scroller.querySelector("[data-nacre-divider-row]"), 0);
        })}
        ref={ref}
      >
        {children ?? messages.jumpToMemoryStart}
      </Component>
    );
  },
);
MessageListJumpToMemoryStart.displayName = "MessageList.JumpToMemoryStart";
