"use client";
import type { Engine } from "@conch/engine-client";
import type { ChatDirectory } from "@conch/engine-client/remote";
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from "react";
import { useControllableState } from "../internal/use-controllable-state.js";
import { type ChatListSnapshot, createChatListState, randomChatId } from "./chat-list-state.js";

/** Options of {@link useChats}. */
export interface UseChatsOptions {
  /** Where the chats are: a store's `directory`, or a remote engine's (`GET /chats` on the server). */
  readonly directory: ChatDirectory;
  /** The engine the chats talk to: a turn that starts or ends reads the list again (titles, order). Default: none. */
  readonly engine?: Pick<Engine, "subscribe">;
  /** Chats a page (`loadMore` reads the next). Default 30. */
  readonly pageSize?: number;
  /** The title of a chat with no message yet. Default "New chat". */
  readonly newTitle?: string;
  /** Makes a new chat's id. Default: `chat-` and a random base-36 string. */
  readonly newChatId?: () => string;
  /** The open chat (controlled). */
  readonly current?: string;
  /** The chat to open first (uncontrolled). Default: a new chat. */
  readonly defaultCurrent?: string;
  /** Called when the open chat changes (to keep it across reloads). */
  readonly onCurrentChange?: (chatId: string) => void;
}

/** What {@link useChats} gives: the list, the open chat, and what a person can do to them. */
export interface UseChatsResult extends ChatListSnapshot {
  /** The open chat's id. */
  readonly current: string;
  /** Opens a chat. */
  select(chatId: string): void;
  /** Makes a chat with no message, lists it at once ("New chat") and opens it; its id. */
  newChat(): string;
  /** Renames a chat (optimistically; a refusal puts the old title back and sets `error`). */
  rename(chatId: string, title: string): Promise<void>;
  /** Removes a chat whole; when it is the open one, the next chat opens (a new one when none is left). */
  remove(chatId: string): Promise<void>;
  /** Reads the next page. */
  loadMore(): Promise<void>;
  /** Reads the loaded pages again. */
  refresh(): Promise<void>;
}

/**
 * A person's chats over a {@link ChatDirectory}: the list page by page, the open one, new, rename and remove.
 * A new chat is listed at once as "New chat" and takes its title from its first message (the directory's, read
 * again when its turn starts). Render it with the `ChatList` parts.
 */
export function useChats(options: UseChatsOptions): UseChatsResult {
  const { directory, engine, pageSize, newTitle, newChatId } = options;
  // One list per directory; the options that shape it are read when it is made.
  // biome-ignore lint/correctness/useExhaustiveDependencies: a list is made again for another directory only
  const state = useMemo(
    () =>
      createChatListState({
        directory,
        ...(pageSize !== undefined ? { pageSize } : {}),
        ...(newTitle !== undefined ? { newTitle } : {}),
        ...(newChatId !== undefined ? { newChatId } : {}),
      }),
    [directory],
  );
  const snapshot = useSyncExternalStore(state.subscribe, state.getSnapshot, state.getSnapshot);
  // A new chat to open first when none is named: listed as new once the list has loaded (below).
  const [firstChat] = useState(() => options.defaultCurrent ?? (newChatId ?? randomChatId)());
  const [current, setCurrent] = useControllableState({
    prop: options.current,
    defaultProp: firstChat,
    onChange: options.onCurrentChange,
  });

  // The open chat is always in the list: one the directory does not know yet is a new chat.
  useEffect(() => {
    if (snapshot.status === "ready") state.keep(current);
  }, [state, snapshot.status, current]);

  useEffect(() => {
    if (!engine) return;
    return engine.subscribe((event) => {
      if (event.type === "turn-start" || event.type === "turn-end") void state.refresh();
    });
  }, [engine, state]);

  const newChat = useCallback(() => {
    const id = state.newChat();
    setCurrent(id);
    return id;
  }, [state, setCurrent]);

  const remove = useCallback(
    async (chatId: string) => {
      if (chatId === current) {
        const next = state.getSnapshot().chats.find((chat) => chat.id !== chatId);
        setCurrent(next ? next.id : state.newChat());
      }
      await state.remove(chatId);
    },
    [state, current, setCurrent],
  );

  return {
    ...snapshot,
    current,
    select: setCurrent,
    newChat,
    rename: state.rename,
    remove,
    loadMore: state.loadMore,
    refresh: state.refresh,
  };
}
