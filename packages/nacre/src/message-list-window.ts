import type { ChatMessage } from "@conch/engine-client";

/** Messages rendered in full around what is on screen; the rest are plain-text placeholders. */
export interface RowWindow {
  /** Index of the first message rendered in full. */
  readonly from: number;
  /** Index after the last one. */
  readonly to: number;
}

/** The index of the message with this seq (messages are in seq order), or -1. */
export function indexOfSeq(messages: readonly ChatMessage[], seq: number): number {
  let low = 0;
  let high = messages.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const at = (messages[middle] as ChatMessage).seq;
    if (at === seq) return middle;
    if (at < seq) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** A run of far messages collapsed into one row: `MessageList.Items` renders it; one span per message inside. */
export const collapsedRowsAttribute = "data-nacre-placeholders";
/** The seq of a message's span inside a collapsed run. */
export const placeholderSeqAttribute = "data-placeholder-seq";

function seqOf(element: Element | undefined): number | null {
  const value = element?.getAttribute("data-seq") ?? element?.getAttribute(placeholderSeqAttribute);
  return value === null || value === undefined ? null : Number(value);
}

/** The element standing for a message at `y`: a message row, or a span in a collapsed run; else the row itself. */
function messageAt(row: Element | undefined, y: number): Element | undefined {
  // In a run, its span at `y`: the first whose bottom is below `y`, or the last.
  return row?.hasAttribute(collapsedRowsAttribute) ? row.children[childAt(row.children, y)] : row;
}

/** The first child at or after `index` (going `step`) that stands for a message; its seq, or null. */
function nearestSeq(rows: HTMLCollection, index: number, y: number, step: 1 | -1): number | null {
  for (let at = index; at >= 0 && at < rows.length; at += step) {
    const seq = seqOf(messageAt(rows[at], y));
    if (seq !== null) return seq;
  }
  return null;
}

/** The index of the first element whose bottom is below `y` (px, in the page), else the last, by binary search. */
function childAt(rows: HTMLCollection, y: number): number {
  let low = 0;
  let high = rows.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((rows[middle] as Element).getBoundingClientRect().bottom > y) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The message rows in view: their seqs, and the indexes of the list's first and last children in view. */
export interface VisibleRows {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly firstChild: number;
  readonly lastChild: number;
}

/**
 * The seqs of the first and last messages within `margin` pixels of the scroller's view, by binary search over
 * the list's children (and the spans of a collapsed run): a dozen layout reads, whatever the length.
 */
export function visibleSeqs(list: HTMLElement, scroller: HTMLElement, margin: number): VisibleRows | null {
  const rows = list.children;
  if (rows.length === 0) return null;
  const view = scroller.getBoundingClientRect();
  const top = view.top - margin;
  const bottom = view.bottom + margin;
  const first = childAt(rows, top);
  let low = first;
  let high = rows.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((rows[middle] as Element).getBoundingClientRect().top < bottom) low = middle;
    else high = middle - 1;
  }
  const firstSeq = nearestSeq(rows, first, top, 1) ?? nearestSeq(rows, first, top, -1);
  const lastSeq = nearestSeq(rows, low, bottom, -1) ?? nearestSeq(rows, low, bottom, 1);
  return firstSeq === null || lastSeq === null ? null : { firstSeq, lastSeq, firstChild: first, lastChild: low };
}

/** A message's row, or its span in a collapsed run; null when it is not in the page. */
export function messageElement(list: HTMLElement, seq: number): Element | null {
  return (
    list.querySelector(`:scope > [data-seq="${seq}"]`) ??
    list.querySelector(`:scope > [${collapsedRowsAttribute}] > [${placeholderSeqAttribute}="${seq}"]`)
  );
}

/** Where the reader is: at the end, or at a message (its seq) with the view's top `offset` px into it. */
export type SavedPosition =
  | { readonly atEnd: true }
  | { readonly atEnd: false; readonly seq: number; readonly offset: number };

/**
 * The reader's place now: the message at the view's top (or its middle: where a find or a script put what it
 * brought into view), with how far the view's top is into it. The divider and problem rows have no seq: the
 * next message stands for them.
 */
export function currentPosition(
  list: HTMLElement,
  scroller: HTMLElement,
  atEnd: boolean,
  at: "top" | "middle" = "top",
): SavedPosition | null {
  if (atEnd) return { atEnd: true };
  const rows = list.children;
  if (rows.length === 0) return null;
  const view = scroller.getBoundingClientRect();
  const y = at === "top" ? view.top : view.top + view.height / 2;
  const seq = nearestSeq(rows, childAt(rows, y), y, 1) ?? nearestSeq(rows, rows.length - 1, y, -1);
  const element = seq === null ? null : messageElement(list, seq);
  if (seq === null || !element) return null;
  return { atEnd: false, seq, offset: Math.round(view.top - element.getBoundingClientRect().top) };
}

/** Scrolls so that the view's top is `offset` px into the row. */
export function scrollRowTo(scroller: HTMLElement, row: Element, offset: number): void {
  const delta = row.getBoundingClientRect().top - scroller.getBoundingClientRect().top + offset;
  scroller.scrollTop += delta;
}

export function readPosition(key: string): SavedPosition | null {
  try {
    const raw = globalThis.sessionStorage?.getItem(key);
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<{ atEnd: boolean; seq: number; offset: number }>;
    if (value.atEnd === true) return { atEnd: true };
    if (typeof value.seq === "number" && Number.isFinite(value.seq) && typeof value.offset === "number") {
      return { atEnd: false, seq: value.seq, offset: value.offset };
    }
    return null;
  } catch {
    // Storage may be off (private mode, a sandboxed frame) or hold something else: start at the end.
    return null;
  }
}

export function writePosition(key: string, position: SavedPosition): void {
  try {
    globalThis.sessionStorage?.setItem(key, JSON.stringify(position));
  } catch {
    // Full or off: the position is a convenience, never worth an error.
  }
}

/** A placeholder's height before it was ever measured: a guess from its length (one 20 px line per 80 characters). */
export function estimateHeight(text: string): number {
  return 40 + 20 * Math.max(1, Math.ceil(text.length / 80));
}
