"use client";
import { newestTurnStart } from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import {
  type ComponentPropsWithoutRef,
  createContext,
  Fragment,
  forwardRef,
  type UIEvent,
  useCallback,
  useContext,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  useTransition,
} from "react";
import { useConversation, useNacreMessages, useStreamingMessage } from "./conversation.js";
import { composeEventHandlers, composeRefs } from "./internal/primitives.js";
import { Message, StreamingMessage } from "./message.js";
import { SummaryDividerRoot } from "./summary-divider.js";
import { TurnProblemRoot } from "./turn-problem.js";

/** Within this many pixels of the bottom, the list follows new text. */
const pinSlack = 48;

/** Scrolls to the bottom if the person was there: call after content grew. */
const GrewContext = createContext<() => void>(() => {});

export interface MessageListRootProps extends ComponentPropsWithoutRef<"div"> {
  asChild?: boolean;
}

/**
 * The scrolling view of the chat; it follows new text while the person is at the bottom and stays put when
 * they scrolled up. Focusable, named "Messages". `data-nacre-message-list`, `data-pinned` while following.
 */
export const MessageListRoot = forwardRef<HTMLDivElement, MessageListRootProps>(function MessageListRoot(
  { asChild, children, onScroll, ...props },
  ref,
) {
  const messages = useNacreMessages();
  const element = useRef<HTMLDivElement | null>(null);
  const pinned = useRef(true);
  const grew = useCallback(() => {
    const node = element.current;
    if (node && pinned.current) node.scrollTop = node.scrollHeight;
  }, []);
  useLayoutEffect(() => {
    const node = element.current;
    if (!node) return;
    node.scrollTop = node.scrollHeight;
    // Rows settle their height after they render (fonts, `content-visibility`): keep following meanwhile.
    if (typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(grew);
    for (const child of node.children) observer.observe(child);
    return () => observer.disconnect();
  }, [grew]);
  const Component = asChild ? Slot : "div";
  return (
    <GrewContext.Provider value={grew}>
      <Component
        role="region"
        aria-label={messages.messageListLabel}
        // The list scrolls: keyboard people need to reach it too.
        tabIndex={0}
        data-nacre-message-list=""
        {...props}
        onScroll={composeEventHandlers(onScroll, (event: UIEvent<HTMLDivElement>) => {
          const node = event.currentTarget;
          const isPinned = node.scrollHeight - node.scrollTop - node.clientHeight <= pinSlack;
          pinned.current = isPinned;
          if (isPinned) node.setAttribute("data-pinned", "");
          else node.removeAttribute("data-pinned");
        })}
        data-pinned=""
        ref={composeRefs(ref, element)}
      >
        {children ?? <MessageListItems />}
      </Component>
    </GrewContext.Provider>
  );
});
MessageListRoot.displayName = "MessageList.Root";

export interface MessageListItemsProps extends ComponentPropsWithoutRef<"ol"> {
  /** How many of the newest messages render first; older ones follow in the background. Default 120. */
  initialRows?: number;
  /** How many older messages each background step adds. Default 400. */
  rowsPerStep?: number;
}

/**
 * The newest rows first, then the older ones in low-priority steps (React transitions, which yield to
 * input), so a 2,000-message chat shows its end at once and every message is in the page soon after.
 */
function useProgressiveRows(total: number, initialRows: number, rowsPerStep: number): number {
  // -1 until the log has loaded; then how many of the oldest messages are not rendered yet.
  const [hidden, setHidden] = useState(-1);
  const [, startTransition] = useTransition();
  if (hidden === -1 && total > 0) setHidden(Math.max(0, total - initialRows));
  const waiting = hidden === -1 ? Math.max(0, total - initialRows) : hidden;
  useEffect(() => {
    if (waiting <= 0) return;
    const timer = setTimeout(() =>
      startTransition(() => setHidden((current) => Math.max(0, (current === -1 ? waiting : current) - rowsPerStep))),
    );
    return () => clearTimeout(timer);
  }, [waiting, rowsPerStep]);
  return waiting;
}

/**
 * Every message of the log (folded ones too, marked `data-folded`), the summary divider where the model's
 * memory starts, the turn problem after the message it belongs to, and the message being written. Rows are
 * memoised: a new message renders one row, a streamed delta renders only the streaming row. A long log
 * renders its newest rows first (`initialRows`) and the rest in the background; `data-rendering` meanwhile.
 */
export const MessageListItems = forwardRef<HTMLOListElement, MessageListItemsProps>(function MessageListItems(
  { initialRows = 120, rowsPerStep = 400, children, ...props },
  ref,
) {
  const { messages, firstKeptSeq, problem, compacting, summary } = useConversation();
  const grew = useContext(GrewContext);
  const hidden = useProgressiveRows(messages.length, initialRows, rowsPerStep);
  // The divider waits at the newest turn while a first fold runs, where a fold on request will put it.
  const summarisingAt = compacting && !summary ? newestTurnStart(messages) : null;
  const dividerAt = firstKeptSeq ?? summarisingAt;
  const lastSeq = messages.at(-1)?.seq ?? -1;
  // Runs when a row is added, the divider moves or a problem shows: the list grew.
  // biome-ignore lint/correctness/useExhaustiveDependencies: these values are the trigger, not inputs
  useLayoutEffect(() => {
    grew();
  }, [grew, lastSeq, dividerAt, problem]);
  // The rows change with the log, the divider and the problem; not when only the status does (a few times a turn).
  const rows = useMemo(
    () =>
      (hidden > 0 ? messages.slice(hidden) : messages).map((message) => (
        <Fragment key={message.seq}>
          {message.seq === dividerAt ? (
            <li data-nacre-divider-row="">
              <SummaryDividerRoot />
            </li>
          ) : null}
          <Message message={message} folded={firstKeptSeq !== null && message.seq < firstKeptSeq} />
          {problem && problem.seq === message.seq ? (
            <li data-nacre-problem-row="">
              <TurnProblemRoot />
            </li>
          ) : null}
        </Fragment>
      )),
    [messages, hidden, dividerAt, firstKeptSeq, problem],
  );
  return (
    <ol data-nacre-message-items="" {...(hidden > 0 ? { "data-rendering": "" } : {})} {...props} ref={ref}>
      {rows}
      <StreamingRow lastSeq={lastSeq} />
      {children}
    </ol>
  );
});
MessageListItems.displayName = "MessageList.Items";

function StreamingRow({ lastSeq }: { lastSeq: number }) {
  const streaming = useStreamingMessage();
  const grew = useContext(GrewContext);
  const visible = streaming !== null && streaming.seq > lastSeq;
  const length = visible ? streaming.text.length + streaming.thinking.length : 0;
  useLayoutEffect(() => {
    if (length > 0) grew();
  }, [grew, length]);
  if (!visible) return null;
  return <StreamingMessage streaming={streaming} />;
}
