"use client";
import { messageText } from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import { type ComponentPropsWithoutRef, type CSSProperties, forwardRef, useEffect, useRef, useState } from "react";
import { useConversation, useNacreMessages } from "./conversation.js";

/** Off screen but read: the region is for screen readers; sighted people see the reply in the list. */
const visuallyHidden: CSSProperties = {
  position: "absolute",
  width: 1,
  height: 1,
  padding: 0,
  margin: -1,
  overflow: "hidden",
  clip: "rect(0, 0, 0, 0)",
  whiteSpace: "nowrap",
  border: 0,
};

export interface MessageListAnnouncerProps extends ComponentPropsWithoutRef<"div"> {
  asChild?: boolean;
}

/**
 * A polite live region that says one word when a turn starts ("Working…"), then reads the reply once it is
 * finished (never delta by delta, never the replies already there when the chat loaded). Visually hidden. `role="status"`, `data-nacre-message-list-announcer`.
 * `MessageList.Root` renders one unless given children.
 */
export const MessageListAnnouncer = forwardRef<HTMLDivElement, MessageListAnnouncerProps>(function MessageListAnnouncer(
  { asChild, style, ...props },
  ref,
) {
  const { messages, isLoading, status, problem } = useConversation();
  const words = useNacreMessages();
  // The newest reply seen so far: only replies after it are announced.
  const seen = useRef<number | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const last = messages.at(-1);
  useEffect(() => {
    if (isLoading) return;
    const newestReply = last?.role === "assistant" ? last : null;
    if (seen.current === null) {
      // The chat as loaded: nothing to announce, only a floor.
      seen.current = newestReply?.seq ?? last?.seq ?? -1;
      return;
    }
    if (!newestReply || newestReply.seq <= seen.current) return;
    seen.current = newestReply.seq;
    const text = messageText(newestReply).trim();
    if (text) setAnnouncement(words.replyAnnouncement({ text }));
  }, [isLoading, last, words]);
  // One word while the turn starts (not between the reply's end and the turn's): the pending row is for the eye.
  const starting = (status === "submitted" || status === "compacting") && last?.role !== "assistant" && !problem;
  useEffect(() => {
    if (starting) setAnnouncement(words.pending);
  }, [starting, words]);
  const Component = asChild ? Slot : "div";
  return (
    <Component
      role="status"
      aria-live="polite"
      aria-atomic="true"
      data-nacre-message-list-announcer=""
      style={{ ...visuallyHidden, ...style }}
      {...props}
      ref={ref}
    >
      {announcement}
    </Component>
  );
});
MessageListAnnouncer.displayName = "MessageList.Announcer";
