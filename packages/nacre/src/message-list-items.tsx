"use client";
import { type ChatMessage, messageText, newestTurnStart } from "@conch/engine-client";
import {
  type ComponentPropsWithoutRef,
  forwardRef,
  startTransition,
  useContext,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from "react";
import { useConversation, useNacreMessages, useStreamingMessage } from "./conversation.js";
import { composeRefs } from "./internal/primitives.js";
import { Message, StreamingMessage } from "./message.js";
import { MessageListContext } from "./message-list-control.js";
import { CollapsedRows, groupSize, type RenderMessage, RowGroup } from "./message-list-rows.js";
import {
  currentPosition,
  indexOfSeq,
  messageElement,
  type RowWindow,
  readPosition,
  type SavedPosition,
  visibleSeqs,
  writePosition,
} from "./message-list-window.js";
import { SummaryDividerRoot } from "./summary-divider.js";

export interface MessageListItemsProps extends ComponentPropsWithoutRef<"ol"> {
  /** How many of the newest messages are in the page after the first render; older ones follow in the background. Default 200. */
  initialRows?: number;
  /** How many older messages each background step adds. Default 1,000. */
  rowsPerStep?: number;
  /** Messages rendered in full beyond each edge of the view. Default 8. */
  overscan?: number;
  /** Renders a message in full your own way (the list, divider, problem card and placeholders stay the list's). */
  renderMessage?: RenderMessage;
  /**
   * Where the reader's place in this chat is kept across a reload (sessionStorage), or `false` for nowhere.
   * Default: a key of the engine's id and the chat id.
   */
  positionKey?: string | false;
}

/**
 * Messages this far from the rows in full are collapsed, a run of them to one row (`CollapsedRows`): React keeps
 * a few hundred elements for a log of any length. A chat of about a hundred messages never collapses anything.
 */
const rowsOpenAround = 2 * groupSize;

const defaultRenderMessage: RenderMessage = ({ message, folded }) => <Message message={message} folded={folded} />;

interface ItemsState {
  readonly chat: string;
  /** Index of the oldest message in the page; older ones are added in the background. */
  readonly mountedFrom: number;
  readonly window: RowWindow;
  /** Where to put the view after the first render with messages. */
  readonly start: SavedPosition | null;
}

function clampWindow(from: number, to: number, count: number): RowWindow {
  return { from: Math.max(0, from), to: Math.min(count, to) };
}

/** The rows in full when the view is at the end: two overscans' worth, the screen's and the one above it. */
const endWindow = (count: number, overscan: number) => clampWindow(count - 2 * overscan, count, count);

/** The first state of a chat's list: the end (or the saved place) in full, a few hundred rows around it in the page. */
function firstState(
  chat: string,
  messages: readonly ChatMessage[],
  saved: SavedPosition | null,
  initialRows: number,
  overscan: number,
): ItemsState {
  const count = messages.length;
  const at = saved && !saved.atEnd ? indexOfSeq(messages, saved.seq) : -1;
  const anchor = at === -1 ? count - 1 : at;
  return {
    chat,
    mountedFrom: Math.max(0, Math.min(anchor - overscan * 4, count - initialRows)),
    window: at === -1 ? endWindow(count, overscan) : clampWindow(at - overscan, at + 3 * overscan, count),
    start: at === -1 ? { atEnd: true } : (saved as SavedPosition),
  };
}

/**
 * Every message of the log, in order: the ones on screen (and `overscan` beyond) rendered in full, those near
 * them as plain-text placeholders under `content-visibility: auto`, the far ones in collapsed runs of 32 (one row
 * each, its spans made by the DOM; find-in-page finds every message's text either way), the summary
 * divider where the model's memory starts, the turn problem after its message, and the message being written.
 * A long log puts its newest `initialRows` in the page first and the older ones in background steps (React
 * transitions, which yield to input); `data-rendering` meanwhile. A streamed delta renders the streaming row only.
 */
export const MessageListItems = forwardRef<HTMLOListElement, MessageListItemsProps>(function MessageListItems(
  {
    initialRows = 200,
    rowsPerStep = 1000,
    overscan = 8,
    renderMessage = defaultRenderMessage,
    positionKey,
    children,
    ...props
  },
  ref,
) {
  const { engine, chatId, messages, firstKeptSeq, problem, compacting, summary, status, send } = useConversation();
  const words = useNacreMessages();
  const list = useContext(MessageListContext);
  const element = useRef<HTMLOListElement | null>(null);
  const chat = `${engine.id}\u0000${chatId}`;
  const storageKey = positionKey === false ? null : (positionKey ?? `nacre:message-list:${engine.id}:${chatId}`);
  const count = messages.length;

  const [state, setState] = useState<ItemsState | null>(null);
  let current = state;
  if (count > 0 && (current === null || current.chat !== chat)) {
    current = firstState(chat, messages, storageKey ? readPosition(storageKey) : null, initialRows, overscan);
    setState(current);
  }
  const mountedFrom = current ? Math.min(current.mountedFrom, count) : count;
  const window = current?.window ?? { from: count, to: count };
  // Rows measured in full, by seq; a new map when one changed enough to matter, so groups render again.
  const heights = useRef(new Map<number, number>());

  // While a fold runs, "Summarising…" stands where the fold will cut (the engine's `compacting` says where), so the
  // summary comes in the same place. From an engine that does not say: a first fold's waits at the newest turn
  // (where a fold on request will put it), a later fold's at the divider it will move.
  const summarisingAt = compacting
    ? (compacting.firstKeptSeq ?? (summary ? firstKeptSeq : newestTurnStart(messages)))
    : null;
  const dividerAt = summarisingAt ?? firstKeptSeq;
  const lastSeq = messages.at(-1)?.seq ?? -1;
  // A fold ahead of the need may fold every message shown (the next turn keeps only its own): the divider then
  // stands after the last one, where the person's next message will go, instead of before a row not there yet.
  const dividerAtEnd = count > 0 && dividerAt !== null && dividerAt > lastSeq;

  // Older rows in the background, one step at a time.
  useEffect(() => {
    if (mountedFrom <= 0 || !current) return;
    const timer = setTimeout(() =>
      startTransition(() =>
        setState((before) =>
          before ? { ...before, mountedFrom: Math.max(0, before.mountedFrom - rowsPerStep) } : before,
        ),
      ),
    );
    return () => clearTimeout(timer);
  }, [mountedFrom, rowsPerStep, current]);

  // Keeps the rows in full around the view: on scroll, on resize, and after every render.
  const windowRef = useRef(window);
  windowRef.current = window;
  const check = useRef(() => {});
  check.current = () => {
    const node = element.current;
    const scroller = list.scroller.current;
    if (!node || !scroller || count === 0) return;
    const seen = visibleSeqs(node, scroller, 0);
    if (!seen) return;
    for (let child = seen.firstChild; child <= seen.lastChild; child += 1) {
      const row = node.children[child] as HTMLElement | undefined;
      const seq = row?.getAttribute("data-seq");
      if (row && seq && !row.hasAttribute("data-placeholder")) heights.current.set(Number(seq), row.offsetHeight);
    }
    const first = indexOfSeq(messages, seen.firstSeq);
    const last = indexOfSeq(messages, seen.lastSeq);
    if (first === -1 || last === -1) return;
    const shown = windowRef.current;
    if (first >= shown.from && last < shown.to) return;
    const next = clampWindow(first - overscan, last + 1 + overscan, count);
    windowRef.current = next;
    setState((before) => (before ? { ...before, window: next } : before));
  };
  useEffect(() => {
    const scroller = list.scroller.current;
    if (!scroller) return;
    let frame = 0;
    let saveTimer: ReturnType<typeof setTimeout> | undefined;
    const save = () => {
      const node = element.current;
      if (!storageKey || !node || !list.scroller.current) return;
      const position = currentPosition(node, list.scroller.current, list.pinned.current);
      if (position) writePosition(storageKey, position);
    };
    const onScroll = () => {
      if (!frame) {
        frame = requestAnimationFrame(() => {
          frame = 0;
          const node = element.current;
          const at = node && !list.pinned.current ? list.anchorAfterScroll() : null;
          if (node && at) {
            const position = currentPosition(node, scroller, false, at);
            if (position && !position.atEnd) list.setAnchor(() => messageElement(node, position.seq), position.offset);
          }
          check.current();
        });
      }
      clearTimeout(saveTimer);
      saveTimer = setTimeout(save, 150);
    };
    scroller.addEventListener("scroll", onScroll, { passive: true });
    globalThis.addEventListener?.("pagehide", save);
    return () => {
      scroller.removeEventListener("scroll", onScroll);
      globalThis.removeEventListener?.("pagehide", save);
      cancelAnimationFrame(frame);
      clearTimeout(saveTimer);
    };
  }, [list, storageKey]);

  // After the first render with messages: the view goes to the end, or back to the reader's place.
  const started = useRef<string | null>(null);
  useLayoutEffect(() => {
    if (!current || started.current === current.chat) return;
    started.current = current.chat;
    const start = current.start;
    const node = element.current;
    if (!start || start.atEnd || !node) {
      list.scrollToEnd();
      return;
    }
    list.holdAt(() => messageElement(node, start.seq), start.offset);
  });

  // Runs when a row is added, the divider moves or a problem shows: the list grew. The person's own turn brings
  // the view to the end, wherever they were reading: a new message of theirs, or their message sent again (a
  // turn starts on it in place, which adds no row but clears the problem after it; a fold clears it too, but
  // runs with no turn).
  const previousLast = useRef(lastSeq);
  const previousProblemSeq = useRef(problem?.seq ?? null);
  const turnRuns = status === "submitted" || status === "streaming";
  // biome-ignore lint/correctness/useExhaustiveDependencies: these values are the trigger, not inputs
  useLayoutEffect(() => {
    const sent = previousLast.current !== -1 && lastSeq > previousLast.current && messages.at(-1)?.role === "user";
    const sentAgain = previousProblemSeq.current === lastSeq && problem === null && turnRuns;
    previousLast.current = lastSeq;
    previousProblemSeq.current = problem?.seq ?? null;
    if (sent || sentAgain) {
      list.scrollToEnd();
      // The end in full now, before the browser paints: from far up, its rows may be a collapsed run.
      const end = endWindow(count, overscan);
      if (windowRef.current.to < count || windowRef.current.from > end.from) {
        windowRef.current = end;
        setState((before) => (before ? { ...before, window: end } : before));
      }
    } else list.grew();
  }, [list, lastSeq, dividerAt, problem, turnRuns]);

  // After every render: stay at the end (rows added above, in a background step, must not leave the view behind
  // even until the next frame) or keep a held place; then, once the browser has laid the rows out and adjusted
  // the scroll for rows added above (scroll anchoring, in the next frame), see whether other rows need rendering.
  useLayoutEffect(() => {
    list.grew();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => {
        list.keepPlace();
        check.current();
      });
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  });

  const groups = useMemo(() => {
    const out = [];
    const folded = firstKeptSeq ?? -1;
    for (let start = Math.floor(mountedFrom / groupSize) * groupSize; start < count; start += groupSize) {
      const from = Math.max(start, mountedFrom);
      const end = Math.min(count, start + groupSize);
      const first = messages[from] as ChatMessage;
      const last = messages[end - 1] as ChatMessage;
      const fullFrom = Math.max(from, window.from);
      const fullTo = Math.min(end, window.to);
      const hasFull = fullFrom < fullTo;
      const inGroup = (seq: number | null) => (seq !== null && seq >= first.seq && seq <= last.seq ? seq : null);
      const divider = inGroup(dividerAt);
      const problemSeq = inGroup(problem?.seq ?? null);
      const foldedBelow = folded <= first.seq ? -1 : folded > last.seq ? Number.POSITIVE_INFINITY : folded;
      if (end <= window.from - rowsOpenAround || from >= window.to + rowsOpenAround) {
        const straddlesFold = foldedBelow !== -1 && foldedBelow !== Number.POSITIVE_INFINITY;
        if (divider === null && problemSeq === null && !straddlesFold) {
          out.push(
            <CollapsedRows
              key={start}
              messages={messages}
              start={from}
              end={end}
              folded={foldedBelow === Number.POSITIVE_INFINITY}
              heights={heights.current}
            />,
          );
          continue;
        }
      }
      out.push(
        <RowGroup
          key={start}
          messages={messages}
          start={from}
          end={end}
          fullFrom={hasFull ? fullFrom : 0}
          fullTo={hasFull ? fullTo : 0}
          dividerAt={divider}
          problemSeq={problemSeq}
          foldedBelow={foldedBelow}
          renderMessage={hasFull ? renderMessage : null}
          heights={heights.current}
        />,
      );
    }
    return out;
  }, [messages, count, mountedFrom, window, dividerAt, problem, firstKeptSeq, renderMessage]);

  // After the last message, when no reply is being written: a sign of work from the turn's start to the reply's
  // first word; Send again under a person's message left unanswered (a fold cleared its too-long card, or the
  // turn was stopped before a word); Continue under a reply cut off at the output limit or the window.
  const last = messages.at(-1);
  let turnEnd = null;
  if ((status === "submitted" || status === "compacting") && last?.role !== "assistant" && !problem) {
    // The live region says it once; the row is for the eye.
    turnEnd = (
      <li data-nacre-pending="" aria-hidden="true">
        {words.pending}
      </li>
    );
  } else if (status === "ready" && last && !problem && (last.role === "user" || last.finishReason === "length")) {
    const continues = last.role !== "user";
    turnEnd = (
      <li data-nacre-turn-end-row="">
        <button
          type="button"
          {...{ [continues ? "data-nacre-continue" : "data-nacre-send-again"]: "" }}
          onClick={() =>
            continues
              ? send(words.continuePrompt, { continuation: true })
              : // Answered in place: the message stays where it is, pictures and all.
                send(messageText(last), { retrySeq: last.seq })
          }
        >
          {continues ? words.continueReply : words.problemSendAgain}
        </button>
      </li>
    );
  }

  return (
    <ol
      data-nacre-message-items=""
      {...(mountedFrom > 0 ? { "data-rendering": "" } : {})}
      {...props}
      ref={composeRefs(ref, element)}
    >
      {groups}
      {dividerAtEnd ? (
        <li data-nacre-divider-row="">
          <SummaryDividerRoot />
        </li>
      ) : null}
      {turnEnd}
      <StreamingRow lastSeq={lastSeq} />
      {children}
    </ol>
  );
});
MessageListItems.displayName = "MessageList.Items";

function StreamingRow({ lastSeq }: { lastSeq: number }) {
  const streaming = useStreamingMessage();
  const list = useContext(MessageListContext);
  const visible = streaming !== null && streaming.seq > lastSeq;
  const length = visible ? streaming.text.length + streaming.thinking.length : 0;
  useLayoutEffect(() => {
    if (length > 0) list.grew();
  }, [list, length]);
  if (!visible) return null;
  return <StreamingMessage key={streaming.seq} streaming={streaming} />;
}
