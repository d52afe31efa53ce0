"use client";
import type { HealthNote } from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import { type ComponentPropsWithoutRef, createContext, forwardRef, useContext, useId } from "react";
import { useConversation, useInConversation, useNacreMessages } from "./conversation.js";
import { NacreOutsideProviderError } from "./errors.js";
import { preferPassed } from "./internal/conversation-defaults.js";
import { PlainText } from "./internal/plain-text.js";

interface HealthData {
  readonly notes: readonly HealthNote[];
  readonly titleId: string;
}

const HealthContext = createContext<HealthData | null>(null);

function useHealth(part: string): HealthData {
  const data = useContext(HealthContext);
  if (!data) throw new NacreOutsideProviderError(`<HealthNotes.${part}>`, "<HealthNotes.Root>");
  return data;
}

export interface HealthNotesRootProps extends ComponentPropsWithoutRef<"section"> {
  /** Newest first. Default: the conversation's. */
  notes?: readonly HealthNote[];
  asChild?: boolean;
}

const RootImpl = forwardRef<HTMLElement, HealthNotesRootProps & { notes: readonly HealthNote[] }>(
  function HealthNotesRootImpl({ notes, asChild, children, ...props }, ref) {
    const titleId = useId();
    const Component = asChild ? Slot : "section";
    return (
      <HealthContext.Provider value={{ notes, titleId }}>
        <Component aria-labelledby={titleId} data-nacre-health-notes="" data-count={notes.length} {...props} ref={ref}>
          {children ?? (
            <>
              <HealthNotesTitle />
              <HealthNotesList />
            </>
          )}
        </Component>
      </HealthContext.Provider>
    );
  },
);

const ConnectedRoot = forwardRef<HTMLElement, HealthNotesRootProps>(function HealthNotesConnectedRoot(props, ref) {
  const { healthNotes } = useConversation();
  return <RootImpl {...preferPassed(props, { notes: healthNotes })} ref={ref} />;
});

/**
 * The quiet things a person may want to know later (the "Settings → Health" list): quiet retries after a
 * "too long" refusal, summariser failures, windows learned. Newest first. `data-nacre-health-notes`.
 */
export const HealthNotesRoot = forwardRef<HTMLElement, HealthNotesRootProps>(function HealthNotesRoot(props, ref) {
  const inConversation = useInConversation();
  if (inConversation) return <ConnectedRoot {...props} ref={ref} />;
  return <RootImpl {...props} notes={props.notes ?? []} ref={ref} />;
});
HealthNotesRoot.displayName = "HealthNotes.Root";

export interface HealthNotesTitleProps extends ComponentPropsWithoutRef<"h2"> {
  asChild?: boolean;
}

/** The heading ("Health"); an `h2` unless `asChild`. */
export const HealthNotesTitle = forwardRef<HTMLHeadingElement, HealthNotesTitleProps>(function HealthNotesTitle(
  { asChild, children, ...props },
  ref,
) {
  const data = useHealth("Title");
  const messages = useNacreMessages();
  const Component = asChild ? Slot : "h2";
  return (
    <Component id={data.titleId} data-nacre-health-notes-title="" {...props} ref={ref}>
      {children ?? messages.healthTitle}
    </Component>
  );
});
HealthNotesTitle.displayName = "HealthNotes.Title";

export interface HealthNotesListProps extends ComponentPropsWithoutRef<"ul"> {
  asChild?: boolean;
}

/** The notes, newest first, or the empty line. */
export const HealthNotesList = forwardRef<HTMLUListElement, HealthNotesListProps>(function HealthNotesList(
  { asChild, children, ...props },
  ref,
) {
  const data = useHealth("List");
  const messages = useNacreMessages();
  if (data.notes.length === 0 && children === undefined) {
    return <p data-nacre-health-notes-empty="">{messages.healthEmpty}</p>;
  }
  const Component = asChild ? Slot : "ul";
  return (
    <Component data-nacre-health-notes-list="" {...props} ref={ref}>
      {children ?? data.notes.map((note) => <HealthNotesItem key={note.id} note={note} />)}
    </Component>
  );
});
HealthNotesList.displayName = "HealthNotes.List";

export interface HealthNotesItemProps extends ComponentPropsWithoutRef<"li"> {
  note: HealthNote;
  asChild?: boolean;
}

/** One note: its kind, its text and when. `data-kind` is the note's kind (`healed`, `summary-failed`, `summary-shortened`, `window-learned`, `usage-ignored`, `log-repaired`). */
export const HealthNotesItem = forwardRef<HTMLLIElement, HealthNotesItemProps>(function HealthNotesItem(
  { note, asChild, children, ...props },
  ref,
) {
  const messages = useNacreMessages();
  const Component = asChild ? Slot : "li";
  return (
    <Component data-nacre-health-note="" data-kind={note.kind} {...props} ref={ref}>
      {children ?? (
        <>
          <span data-nacre-health-note-kind="">{messages.healthKind(note.kind)}</span>{" "}
          <span data-nacre-health-note-text="" dir="auto">
            <PlainText text={note.text} />
          </span>{" "}
          <time data-nacre-health-note-time="" dateTime={new Date(note.at).toISOString()}>
            {messages.healthTime(note.at)}
          </time>
        </>
      )}
    </Component>
  );
});
HealthNotesItem.displayName = "HealthNotes.Item";
