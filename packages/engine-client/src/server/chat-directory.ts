import type { WireChatListing } from "../protocol/wire.js";

/**
 * One person's chats as a list, beside their engine's store (which keeps each chat but cannot list or remove
 * one). `createFileChatDirectory` from `@conch/engine-client/node` reads a file store's folder.
 */
export interface ChatDirectory {
  /** Newest first (by last change), `limit` from `offset`. */
  list(page: { readonly offset: number; readonly limit: number }): Promise<{
    readonly chats: readonly WireChatListing[];
    readonly total: number;
  }>;
  /** Removes the chat whole: its log, transcript and summary. False when there was no such chat. */
  remove(chatId: string): Promise<boolean>;
}
