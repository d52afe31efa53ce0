"use client";
import { Slot } from "@radix-ui/react-slot";
import {
  type ComponentPropsWithoutRef,
  forwardRef,
  type UIEvent,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from "react";
import { useNacreMessages } from "./conversation.js";
import { composeEventHandlers, composeRefs } from "./internal/primitives.js";
import { MessageListAnnouncer } from "./message-list-announcer.js";
import { MessageListContext, type MessageListControl, MessageListPinnedContext } from "./message-list-control.js";
import { MessageListItems } from "./message-list-items.js";
import { MessageListJumpToLatest, MessageListJumpToMemoryStart } from "./message-list-jump.js";
import type { RenderMessage } from "./message-list-rows.js";
import { scrollRowTo } from "./message-list-window.js";

/** Within this many pixels of the bottom, the list follows new text. */
const pinSlack = 48;
/** How long a jump holds its row in place while the rows around it settle (unless the reader scrolls). */
const holdMs = 1500;
/** A scroll this soon after the reader touched the list (wheel, touch, pointer, key) is theirs. */
const intentMs = 1000;

type Place = { find: () => Element | null; offset: number; until: number } | null;
/** A jump's target holds for a while; the reader's own anchor has no end. */
const isHeld = (place: Place) => place !== null && place.until !== Number.POSITIVE_INFINITY;

export interface MessageListRootProps extends ComponentPropsWithoutRef<"div"> {
  asChild?: boolean;
  /** How each message renders, for the default `MessageList.Items` (`renderBranchMessage` adds the versions). */
  renderMessage?: RenderMessage;
}

/**
 * The scrolling view of the chat; it follows new text while the person is at the bottom and stays put when
 * they scrolled up, and goes to the end when the person sends. Without children: `MessageList.Items`,
 * `MessageList.JumpToMemoryStart` (while the reader is away from the end), `MessageList.JumpToLatest` and
 * `MessageList.Announcer`. Focusable, named "Messages". `data-nacre-message-list`, `data-pinned` while following.
 */
export const MessageListRoot = forwardRef<HTMLDivElement, MessageListRootProps>(function MessageListRoot(
  { asChild, children, onScroll, renderMessage, ...props },
  ref,
) {
  const messages = useNacreMessages();
  const element = useRef<HTMLDivElement | null>(null);
  const pinnedRef = useRef(true);
  const [pinned, setPinned] = useState(true);
  // The place to keep while heights change: a jump's target (held for a moment), or the reader's own place.
  const place = useRef<Place>(null);
  // scrollTop and scrollHeight right after the list last scrolled itself to the end (or saw it there).
  const endTop = useRef(0);
  const endHeight = useRef(0);
  // When the reader last did something that scrolls (wheel, touch, pointer, key).
  const intentAt = useRef(Number.NEGATIVE_INFINITY);

  const control = useMemo<MessageListControl>(() => {
    const setPin = (value: boolean) => {
      pinnedRef.current = value;
      setPinned(value);
    };
    const keepPlace = () => {
      const kept = place.current;
      const node = element.current;
      if (!kept || !node || pinnedRef.current) return;
      // A jump's hold ends: its row stays the reader's place until they scroll.
      if (performance.now() > kept.until) place.current = { ...kept, until: Number.POSITIVE_INFINITY };
      const row = kept.find();
      if (row) scrollRowTo(node, row, kept.offset);
    };
    const toEnd = (node: HTMLElement) => {
      node.scrollTop = node.scrollHeight;
      endTop.current = node.scrollTop;
      endHeight.current = node.scrollHeight;
    };
    return {
      scroller: element,
      pinned: pinnedRef,
      grew() {
        const node = element.current;
        if (!node) return;
        // The reader scrolled up before their scroll event arrived: stop following. Without their hand on the
        // list, a move up is the browser's scroll anchoring (rows above settled smaller), not a reader.
        const distance = node.scrollHeight - node.scrollTop - node.clientHeight;
        const reader = performance.now() - intentAt.current < intentMs;
        if (pinnedRef.current && reader && node.scrollTop < endTop.current - 2 && distance > pinSlack) setPin(false);
        if (pinnedRef.current) toEnd(node);
        else keepPlace();
      },
      scrollToEnd() {
        // A jump to the end (Jump to latest, a message sent) supersedes the reader's last scroll: rows that
        // settle after it must not read as the reader leaving the end.
        intentAt.current = Number.NEGATIVE_INFINITY;
        place.current = null;
        setPin(true);
        const node = element.current;
        if (node) toEnd(node);
      },
      holdAt(find, offset) {
        setPin(false);
        place.current = { find, offset, until: performance.now() + holdMs };
        keepPlace();
      },
      setAnchor(find, offset) {
        if (!isHeld(place.current)) place.current = { find, offset, until: Number.POSITIVE_INFINITY };
      },
      keepPlace,
      anchorAfterScroll() {
        if (performance.now() - intentAt.current < intentMs) return "top";
        const kept = place.current?.find();
        const node = element.current;
        if (!kept || !node) return "middle";
        const view = node.getBoundingClientRect();
        const row = kept.getBoundingClientRect();
        return row.bottom > view.top && row.top < view.bottom ? null : "middle";
      },
    };
  }, []);

  useLayoutEffect(() => {
    const node = element.current;
    if (!node) return;
    // Whatever the reader does to scroll ends a held place; a wheel up stops following at once.
    const release = (event: Event) => {
      intentAt.current = performance.now();
      if (isHeld(place.current)) place.current = null;
      if (event instanceof WheelEvent && event.deltaY < 0 && pinnedRef.current) {
        pinnedRef.current = false;
        setPinned(false);
      }
    };
    const intents = ["wheel", "touchstart", "pointerdown", "keydown"] as const;
    for (const intent of intents) node.addEventListener(intent, release, { passive: true });
    // Rows settle their height after they render (fonts, placeholders laid out): keep following meanwhile.
    const observer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => control.grew());
    for (const child of node.children) observer?.observe(child);
    return () => {
      for (const intent of intents) node.removeEventListener(intent, release);
      observer?.disconnect();
    };
  }, [control]);

  const Component = asChild ? Slot : "div";
  return (
    <MessageListContext.Provider value={control}>
      <MessageListPinnedContext.Provider value={pinned}>
        <Component
          role="region"
          aria-label={messages.messageListLabel}
          // The list scrolls: keyboard people need to reach it too.
          tabIndex={0}
          data-nacre-message-list=""
          {...(pinned ? { "data-pinned": "" } : {})}
          {...props}
          onScroll={composeEventHandlers(onScroll, (event: UIEvent<HTMLDivElement>) => {
            const node = event.currentTarget;
            const atEnd = node.scrollHeight - node.scrollTop - node.clientHeight <= pinSlack;
            // Following, and the view moved off the end by no more than the rows changed height since it was last
            // there, with no reader's hand on the list: the layout moved it (rows rendered in full, placeholders
            // laid out), not a reader: stay at the end. A move farther than any change of height (the browser's
            // find, a script) is a move away.
            const distance = node.scrollHeight - node.scrollTop - node.clientHeight;
            const laidOut = distance <= Math.abs(node.scrollHeight - endHeight.current) + pinSlack;
            const reader = performance.now() - intentAt.current < intentMs;
            if (pinnedRef.current && !atEnd && !reader && laidOut) {
              control.grew();
              return;
            }
            if (atEnd) endHeight.current = node.scrollHeight;
            // A held place is not the end, even when the row is near it.
            const isPinned = atEnd && !isHeld(place.current);
            if (isPinned !== pinnedRef.current) {
              pinnedRef.current = isPinned;
              setPinned(isPinned);
            }
          })}
          ref={composeRefs(ref, element)}
        >
          {children ?? (
            <>
              <MessageListItems {...(renderMessage ? { renderMessage } : {})} />
              {/* While the reader is away from the end, both float over the list's bottom edge (nacre.css). */}
              {pinned ? null : <MessageListJumpToMemoryStart />}
              <MessageListJumpToLatest />
              <MessageListAnnouncer />
            </>
          )}
        </Component>
      </MessageListPinnedContext.Provider>
    </MessageListContext.Provider>
  );
});
MessageListRoot.displayName = "MessageList.Root";
