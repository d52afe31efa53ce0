import { createContext, type RefObject } from "react";

/** What the list's parts share with the scrolling element. */
export interface MessageListControl {
  readonly scroller: RefObject<HTMLDivElement | null>;
  /** Whether the view follows new text (the reader is at the end). */
  readonly pinned: RefObject<boolean>;
  /** Call after content grew: scrolls to the end if the reader is there. */
  grew(): void;
  /** Brings the view to the end and follows new text again. */
  scrollToEnd(): void;
  /** Puts the view's top `offset` px into a row and holds it there while rows around it settle (a jump). */
  holdAt(find: () => Element | null, offset: number): void;
  /** Where the reader is (from a scroll), kept while rows above or under it change; not over a held place. */
  setAnchor(find: () => Element | null, offset: number): void;
  /** Re-applies the held place or the reader's anchor (after a render or a resize changed heights). */
  keepPlace(): void;
  /**
   * Where a scroll that just happened puts the reader's anchor: the view's top after the reader's own scroll, its
   * middle after a jump nobody's hand made (the browser's find, a script); null to keep the anchor there is (a
   * small move that left it in view: the list keeping its place, the browser's scroll anchoring).
   */
  anchorAfterScroll(): "top" | "middle" | null;
}

const detached: MessageListControl = {
  scroller: { current: null },
  pinned: { current: true },
  grew() {},
  scrollToEnd() {},
  holdAt() {},
  setAnchor() {},
  keepPlace() {},
  anchorAfterScroll: () => null,
};

export const MessageListContext = createContext<MessageListControl>(detached);
/** Whether the reader is at the end; apart from the control so that only the parts that show it re-render. */
export const MessageListPinnedContext = createContext(true);
