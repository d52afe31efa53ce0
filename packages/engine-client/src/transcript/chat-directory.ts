import { InvalidChatRecordError } from "../errors.js";
import type { ChatMessage } from "../messages.js";

/** One chat of a {@link ChatDirectory}'s list (and of `GET /chats`). */
export interface ChatListing {
  readonly id: string;
  /** The title the person gave it, else the first words of its first message (else its id). */
  readonly title: string;
  /** Milliseconds since the epoch of the chat's last message (a rename does not move it). */
  readonly updated: number;
}

/** A page of a {@link ChatDirectory}'s list. */
export interface ChatListPage {
  readonly chats: readonly ChatListing[];
  /** How many chats there are in all. */
  readonly total: number;
}

/**
 * One person's chats as a list, beside their engine (which keeps each chat but cannot list, rename or remove one).
 * Every store has one (`store.directory`); a `RemoteEngine`'s speaks `GET /chats` over HTTP. A chat is
 * listed once a message is written to it; one nobody wrote is no chat (`rename` and `remove` say false).
 */
export interface ChatDirectory {
  /** Newest first (by last message), `limit` from `offset`. */
  list(page: { readonly offset: number; readonly limit: number }): Promise<ChatListPage>;
  /**
   * Gives the chat a title of the person's (see {@link chatTitle}: one line, at most 80 characters). False when
   * there is no such chat; an empty title is an `InvalidChatRecordError`.
   */
  rename(chatId: string, title: string): Promise<boolean>;
  /** Removes the chat whole: its log, transcript, summary and title. False when there was no such chat. */
  remove(chatId: string): Promise<boolean>;
}

/** The longest title kept; a longer one ends in "…". */
export const chatTitleLength = 80;

/**
 * A title as it is kept: the first line of `text` with its spaces collapsed, cut to 80 characters (the last one
 * "…"); null when there are no words. The one rule for a person's title and for the first words of a chat.
 */
export function chatTitle(text: string): string | null {
  const line = text.trim().split("\n")[0]?.replace(/\s+/g, " ").trim() ?? "";
  if (!line) return null;
  const characters = [...line];
  return characters.length > chatTitleLength ? `${characters.slice(0, chatTitleLength - 1).join("")}…` : line;
}

/** The title a chat takes from its first message: the first words of its first text part, or null. */
export function firstWordsTitle(message: Pick<ChatMessage, "parts"> | undefined): string | null {
  for (const part of message?.parts ?? []) {
    if (part.type === "text") return chatTitle(part.text);
  }
  return null;
}

/** A person's title, checked as every store keeps it: see {@link chatTitle}; no words is refused. */
export function checkedTitle(chatId: string, title: string): string {
  const kept = typeof title === "string" ? chatTitle(title) : null;
  if (kept === null) throw new InvalidChatRecordError({ chatId, record: "title", reason: "a title needs words" });
  return kept;
}

/** A page of chats already sorted newest first: `limit` from `offset`, and the count. */
export function pageOf(
  sorted: readonly { readonly id: string; readonly updated: number }[],
  page: { readonly offset: number; readonly limit: number },
  titleOf: (chatId: string) => string,
): ChatListPage {
  return {
    chats: sorted
      .slice(page.offset, page.offset + page.limit)
      .map((chat) => ({ id: chat.id, title: titleOf(chat.id), updated: chat.updated })),
    total: sorted.length,
  };
}

/** Newest first, then by id (a stable order for paging). */
export function newestFirst(a: { id: string; updated: number }, b: { id: string; updated: number }): number {
  return b.updated - a.updated || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
