"use client";
import type { ChatMessage } from "@conch/engine-client";
import { Fragment, memo, type ReactNode, useLayoutEffect, useRef } from "react";
import { collapsedRowsAttribute, estimateHeight, placeholderSeqAttribute } from "./message-list-window.js";
import { SummaryDividerRoot } from "./summary-divider.js";
import { TurnProblemRoot } from "./turn-problem.js";

/** What `MessageList.Items`' `renderMessage` gets for a message rendered in full. */
export interface MessageRenderProps {
  readonly message: ChatMessage;
  /** Whether the message sits before the model's word-for-word memory. */
  readonly folded: boolean;
  /** Its index in the log. */
  readonly index: number;
}

/**
 * Renders one message of the log in full; return a `Message` (with your own children, or `asChild`) so that the
 * row keeps `data-seq`, which the list reads to know what is on screen. Pass a stable function (module level or
 * `useCallback`): a new one renders every on-screen row again.
 */
export type RenderMessage = (props: MessageRenderProps) => ReactNode;

/** Messages per memoised group: moving the window renders the two or three groups at its edges, not the log. */
export const groupSize = 32;

/** Everything a message says, as one string: what a placeholder holds so that find-in-page finds it. */
export function placeholderText(message: ChatMessage): string {
  const only = message.parts.length === 1 ? message.parts[0] : undefined;
  if (only && (only.type === "text" || only.type === "tool-result")) return only.text;
  const texts: string[] = [];
  for (const part of message.parts) {
    switch (part.type) {
      case "text":
      case "tool-result":
        texts.push(part.text);
        break;
      case "tool-call":
        texts.push(`${part.name} ${part.arguments}`);
        break;
      case "picture":
        texts.push(part.name);
        break;
      case "thinking":
        break;
      default:
        part satisfies never;
    }
  }
  return texts.join("\n");
}

export interface RowGroupProps {
  readonly messages: readonly ChatMessage[];
  /** Indexes of the group's messages in the log, `start` to `end`. */
  readonly start: number;
  readonly end: number;
  /** Indexes rendered in full (within the group; equal when none). */
  readonly fullFrom: number;
  readonly fullTo: number;
  /** The divider's seq and the problem's, when in this group; else null. */
  readonly dividerAt: number | null;
  readonly problemSeq: number | null;
  /** Messages with a seq below this are folded (clipped to the group: -1 none, Infinity all). */
  readonly foldedBelow: number;
  /** Given only to groups with rows in full. */
  readonly renderMessage: RenderMessage | null;
  /** Heights of rows measured while in full, by seq: a placeholder takes its row's last height. */
  readonly heights: ReadonlyMap<number, number>;
}

/**
 * A placeholder: the message's text, unstyled, under `content-visibility: auto` with its known or guessed height,
 * so the browser lays it out only near the view, and find-in-page still finds its text.
 */
function placeholder(message: ChatMessage, folded: boolean, heights: ReadonlyMap<number, number>) {
  const text = placeholderText(message);
  return (
    <li
      key={message.seq}
      data-nacre-message=""
      data-role={message.role}
      data-seq={message.seq}
      data-placeholder=""
      {...(folded ? { "data-folded": "" } : {})}
      // Inline on purpose: the height is per row, and skipping far rows must not depend on optional CSS.
      style={{
        contentVisibility: "auto",
        containIntrinsicSize: `auto ${heights.get(message.seq) ?? estimateHeight(text)}px`,
        whiteSpace: "pre-wrap",
      }}
    >
      {text}
    </li>
  );
}

function RowGroupView({
  messages,
  start,
  end,
  fullFrom,
  fullTo,
  dividerAt,
  problemSeq,
  foldedBelow,
  renderMessage,
  heights,
}: RowGroupProps) {
  const rows: ReactNode[] = [];
  for (let index = start; index < end; index += 1) {
    const message = messages[index] as ChatMessage;
    const folded = message.seq < foldedBelow;
    const full = index >= fullFrom && index < fullTo && renderMessage;
    const row = full ? renderMessage({ message, folded, index }) : placeholder(message, folded, heights);
    if (message.seq !== dividerAt && message.seq !== problemSeq) {
      rows.push(full ? <Fragment key={message.seq}>{row}</Fragment> : row);
      continue;
    }
    rows.push(
      <Fragment key={message.seq}>
        {message.seq === dividerAt ? (
          <li data-nacre-divider-row="">
            <SummaryDividerRoot />
          </li>
        ) : null}
        {row}
        {message.seq === problemSeq ? (
          <li data-nacre-problem-row="">
            <TurnProblemRoot />
          </li>
        ) : null}
      </Fragment>,
    );
  }
  return rows;
}

type MessageRange = Pick<RowGroupProps, "messages" | "start" | "end">;

/** Whether the messages `start` to `end` are the same objects in both logs (the log array itself is new per message). */
function sameMessagesIn(before: MessageRange, after: MessageRange): boolean {
  if (before.messages === after.messages) return true;
  for (let index = after.start; index < after.end; index += 1) {
    if (before.messages[index] !== after.messages[index]) return false;
  }
  return true;
}

/** Equal when every prop is, and the group's messages are the same objects (the log array itself is new per message). */
function sameGroup(before: RowGroupProps, after: RowGroupProps): boolean {
  if (
    before.start !== after.start ||
    before.end !== after.end ||
    before.fullFrom !== after.fullFrom ||
    before.fullTo !== after.fullTo ||
    before.dividerAt !== after.dividerAt ||
    before.problemSeq !== after.problemSeq ||
    before.foldedBelow !== after.foldedBelow ||
    before.renderMessage !== after.renderMessage ||
    before.heights !== after.heights
  ) {
    return false;
  }
  return sameMessagesIn(before, after);
}

export const RowGroup = memo(RowGroupView, sameGroup);

export interface CollapsedRowsProps {
  readonly messages: readonly ChatMessage[];
  /** Indexes of the run's messages in the log, `start` to `end`. */
  readonly start: number;
  readonly end: number;
  /** Whether every message of the run is folded. */
  readonly folded: boolean;
  readonly heights: ReadonlyMap<number, number>;
}

/**
 * A run of far messages as one row, its height the sum of theirs: one `<span data-placeholder-seq>` per message,
 * made by the DOM rather than React, so that the messages far from the view cost React one element per run. The
 * text is all in the page: find-in-page finds it, and the list opens the run into rows when the view nears it.
 */
function CollapsedRowsView({ messages, start, end, folded, heights }: CollapsedRowsProps) {
  const element = useRef<HTMLLIElement | null>(null);
  let height = 0;
  for (let index = start; index < end; index += 1) {
    const message = messages[index] as ChatMessage;
    height += heights.get(message.seq) ?? estimateHeight(placeholderText(message));
  }
  // React renders no children here, so it leaves these alone; filled again only when the run's messages changed.
  useLayoutEffect(() => {
    const node = element.current;
    if (!node) return;
    const spans: Array<Node | string> = [];
    for (let index = start; index < end; index += 1) {
      const message = messages[index] as ChatMessage;
      const span = document.createElement("span");
      span.setAttribute(placeholderSeqAttribute, String(message.seq));
      span.append(placeholderText(message));
      spans.push(span, "\n");
    }
    node.replaceChildren(...spans);
  }, [messages, start, end]);
  return (
    <li
      {...{ [collapsedRowsAttribute]: "" }}
      {...(folded ? { "data-folded": "" } : {})}
      style={{ contentVisibility: "auto", containIntrinsicSize: `auto ${height}px`, whiteSpace: "pre-wrap" }}
      ref={element}
    />
  );
}

/** Equal when the run is the same messages (the log array itself is new per message). */
function sameRun(before: CollapsedRowsProps, after: CollapsedRowsProps): boolean {
  if (before.start !== after.start || before.end !== after.end || before.folded !== after.folded) return false;
  return before.heights === after.heights && sameMessagesIn(before, after);
}

export const CollapsedRows = memo(CollapsedRowsView, sameRun);
