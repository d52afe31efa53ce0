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

function seqOf(element: Element | undefined): number | null {
  const value = element?.getAttribute("data-seq");
  return value === null || value === undefined ? null : Number(value);
}

/** The first child at or after `index` (going `step`) that is a message row; its seq, or null. */
function nearestSeq(rows: HTMLCollection, index: number, step: 1 | -1): number | null {
  for (let at = index; at >= 0 && at < rows.length; at += step) {
    const seq = seqOf(rows[at]);
    if (seq !== null) return seq;
  }
  return null;
}

/** The message rows in view: their seqs, and the indexes of the list's first and last children in view. */
export interface VisibleRows {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly firstChild: number;
  readonly lastChild: number;
}

/**
 * The seqs of the first and last message rows within `margin` pixels of the scroller's view, by binary search
 * over the list's children (a dozen layout reads, whatever the length).
 */
export function visibleSeqs(list: HTMLElement, scroller: HTMLElement, margin: number): VisibleRows | null {
  const rows = list.children;
  if (rows.length === 0) return null;
  const view = scroller.getBoundingClientRect();
  const top = view.top - margin;
  const bottom = view.bottom + margin;
  const rect = (index: number) => (rows[index] as Element).getBoundingClientRect();
  let low = 0;
  let high = rows.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (rect(middle).bottom > top) high = middle;
    else low = middle + 1;
  }
  const first = low;
  high = rows.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (rect(middle).top < bottom) low = middle;
    else high = middle - 1;
  }
  const firstSeq = nearestSeq(rows, first, 1) ?? nearestSeq(rows, first, -1);
  const lastSeq = nearestSeq(rows, low, -1) ?? nearestSeq(rows, low, 1);
  return firstSeq === null || lastSeq === null ? null : { firstSeq, lastSeq, firstChild: first, lastChild: low };
}

/** Where the reader is: at the end, or at a message (its seq) with the view's top `offset` px into it. */
export type SavedPosition =
  | { readonly atEnd: true }
  | { readonly atEnd: false; readonly seq: number; readonly offset: number };

/** The reader's place now: the first row in view (a message row: the divider and problem rows have no seq). */
export function currentPosition(list: HTMLElement, scroller: HTMLElement, atEnd: boolean): SavedPosition | null {
  if (atEnd) return { atEnd: true };
  const seqs = visibleSeqs(list, scroller, 0);
  if (!seqs) return null;
  let row = list.children[seqs.firstChild];
  if (!row?.hasAttribute("data-seq")) row = list.querySelector(`:scope > [data-seq="${seqs.firstSeq}"]`) ?? undefined;
  if (!row) return null;
  const offset = scroller.getBoundingClientRect().top - row.getBoundingClientRect().top;
  return { atEnd: false, seq: Number(row.getAttribute("data-seq")), offset: Math.round(offset) };
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
