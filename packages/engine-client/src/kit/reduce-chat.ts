import type { ChatSnapshot } from "../engine.js";
import type { EngineEvent, HealthNote, SummaryState } from "../events.js";
import { addUsage, type ChatMessage } from "../messages.js";
import { problemAfterFold } from "./turn-book.js";

/** Adds a message at its place in the log, or replaces the one with the same `seq`. */
export function upsertMessage(messages: readonly ChatMessage[], message: ChatMessage): readonly ChatMessage[] {
  const last = messages.at(-1);
  if (!last || last.seq < message.seq) return [...messages, message];
  const index = messages.findIndex((existing) => existing.seq >= message.seq);
  if (index === -1) return [...messages, message];
  const next = [...messages];
  if (messages[index]?.seq === message.seq) next[index] = message;
  else next.splice(index, 0, message);
  return next;
}

/**
 * The chat with `message` on its active branch, now its leaf. A new message with a `parent` (an edit, a
 * regenerated answer) and a turn that starts on a message already shown (a regenerate answers it again) cut
 * the branch shown after what they follow. Nothing leaves the log: the engine keeps every version.
 */
function onBranch(chat: ChatSnapshot, message: ChatMessage, turnStart: boolean): ChatSnapshot {
  const known = chat.messages.some((shown) => shown.seq === message.seq);
  const after = known ? (turnStart ? message.seq : null) : (message.parent ?? null);
  const shown = after === null ? chat.messages : chat.messages.filter((kept) => kept.seq <= after);
  return {
    ...chat,
    messages: upsertMessage(shown, message),
    // A chat that knows its tree keeps where the next message goes and what it follows.
    ...(chat.nextSeq !== undefined
      ? { nextSeq: Math.max(chat.nextSeq, message.seq + 1), activeLeaf: message.seq }
      : {}),
  };
}

function addNote(notes: readonly HealthNote[], note: HealthNote): readonly HealthNote[] {
  if (notes.some((existing) => existing.id === note.id)) return notes;
  return [note, ...notes];
}

/**
 * Folds one engine event into the chat as the UI (or a server holding the chat for its clients) shows it. Pure; returns the same object when the event
 * changes nothing the snapshot holds (streaming text lives elsewhere, so that a delta re-renders only the
 * message being written).
 */
export function reduceChat(chat: ChatSnapshot, event: EngineEvent): ChatSnapshot {
  if (event.chatId !== chat.chatId) return chat;
  switch (event.type) {
    case "turn-start":
      return { ...onBranch(chat, event.message, true), problem: null };
    case "message-end":
      return onBranch(chat, event.message, false);
    case "compacted": {
      const { type: _type, chatId: _chatId, ...summary } = event;
      const state: SummaryState = summary;
      // A fold inside a turn comes before its problem, so this never clears the turn's own.
      return { ...chat, summary: state, problem: problemAfterFold(chat.problem) };
    }
    case "health-note": {
      const healthNotes = addNote(chat.healthNotes, event.note);
      return healthNotes === chat.healthNotes ? chat : { ...chat, healthNotes };
    }
    case "turn-problem":
      return { ...chat, problem: { seq: event.seq, problem: event.problem } };
    case "turn-end":
      return {
        ...chat,
        usage: addUsage(chat.usage, event.usage),
        ...(event.contextUsage ? { contextUsage: event.contextUsage } : {}),
      };
    case "message-start":
    case "text-delta":
    case "thinking-delta":
    case "tool-call":
    case "usage":
    case "compacting":
    case "compaction-skipped":
    case "healed":
      return chat;
    default:
      return event satisfies never;
  }
}

/** The seq of the person's newest message (where the newest turn starts), or null. */
export function newestTurnStart(messages: readonly ChatMessage[]): number | null {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role === "user") return message.seq;
  }
  return null;
}

/** Whether a fold on request would fold anything: all but the newest turn, past what is already folded. */
export function hasSomethingToFold(chat: Pick<ChatSnapshot, "messages" | "summary">): boolean {
  const start = newestTurnStart(chat.messages);
  return start !== null && start > (chat.summary?.firstKeptSeq ?? 0);
}

/** How many messages of the log sit before the model's word-for-word memory. */
export function foldedMessageCount(chat: Pick<ChatSnapshot, "messages" | "summary">): number {
  const first = chat.summary?.firstKeptSeq;
  if (first === undefined) return 0;
  let count = 0;
  for (const message of chat.messages) {
    if (message.seq >= first) break;
    count += 1;
  }
  return count;
}
