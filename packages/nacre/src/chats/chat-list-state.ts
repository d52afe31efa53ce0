// The chat list's state over a ChatDirectory, with no React: `useChats` wraps one of these and reads it with
// useSyncExternalStore. Kept beside the hook (not in engine-client) because only the list parts use it.
import type { ChatDirectory, ChatListing } from "@conch/engine-client/remote";

/** One chat of the list: one the directory lists, or a new one nothing is written to yet. */
export interface ChatListEntry {
  readonly id: string;
  /** The person's title, else the first words of the first message; "New chat" (`newTitle`) for a new one. */
  readonly title: string;
  /** Milliseconds since the epoch of the last message; null for a new chat. */
  readonly updated: number | null;
  /** A chat made with `newChat()` that holds no message yet: listed here only, until its first message. */
  readonly isNew: boolean;
}

/** What the list is doing: loading its first page, ready, or failed (see `error`). */
export type ChatListStatus = "loading" | "ready" | "failed";

/** A snapshot of the list. */
export interface ChatListSnapshot {
  readonly status: ChatListStatus;
  /** New chats first, then the directory's, newest first. */
  readonly chats: readonly ChatListEntry[];
  /** Whether the directory holds more than the pages loaded (`loadMore`). */
  readonly hasMore: boolean;
  /** The last failure (loading, renaming or removing), until the next success; null when none. */
  readonly error: unknown;
}

export interface ChatListStateOptions {
  readonly directory: ChatDirectory;
  /** Chats a page. Default 30. */
  readonly pageSize?: number;
  /** The title of a chat with no message yet. Default "New chat". */
  readonly newTitle?: string;
  /** Makes a new chat's id. Default: `chat-` and a random base-36 string. */
  readonly newChatId?: () => string;
}

export interface ChatListState {
  getSnapshot(): ChatListSnapshot;
  subscribe(listener: () => void): () => void;
  /** Reads the pages loaded so far again (a turn changed a title or the order). */
  refresh(): Promise<void>;
  loadMore(): Promise<void>;
  /** Adds a chat with no message, listed at once as "New chat"; its id. */
  newChat(): string;
  /** Lists `chatId` as a new chat when the directory does not list it (the current chat after a reload). */
  keep(chatId: string): void;
  rename(chatId: string, title: string): Promise<void>;
  remove(chatId: string): Promise<void>;
}

/** A new chat's id: `chat-`, the time and a random part, in base 36. */
export function randomChatId(): string {
  return `chat-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

export function createChatListState(options: ChatListStateOptions): ChatListState {
  const { directory } = options;
  const pageSize = options.pageSize ?? 30;
  const newTitle = options.newTitle ?? "New chat";
  const makeId = options.newChatId ?? randomChatId;
  const listeners = new Set<() => void>();
  let listed: ChatListing[] = [];
  let total = 0;
  let fresh: string[] = [];
  /** Titles given to new chats before their first message, sent once the directory lists them. */
  const waitingTitles = new Map<string, string>();
  let status: ChatListStatus = "loading";
  let error: unknown = null;
  let snapshot: ChatListSnapshot | null = null;
  let reads = 0;

  function changed(): void {
    snapshot = null;
    for (const listener of listeners) listener();
  }

  function build(): ChatListSnapshot {
    const listedIds = new Set(listed.map((chat) => chat.id));
    fresh = fresh.filter((id) => !listedIds.has(id));
    const chats: ChatListEntry[] = [
      ...fresh.map((id) => ({ id, title: waitingTitles.get(id) ?? newTitle, updated: null, isNew: true })),
      ...listed.map((chat) => ({ ...chat, isNew: false })),
    ];
    return { status, chats, hasMore: listed.length < total, error };
  }

  /** Reads `count` chats from the start; a read that a later one overtook is dropped. */
  async function read(count: number): Promise<void> {
    const mine = ++reads;
    try {
      const page = await directory.list({ offset: 0, limit: Math.max(count, pageSize) });
      if (mine !== reads) return;
      listed = [...page.chats];
      total = page.total;
      status = "ready";
      error = null;
      await sendWaitingTitles();
    } catch (caught) {
      if (mine !== reads) return;
      if (status === "loading") status = "failed";
      error = caught;
    }
    changed();
  }

  async function sendWaitingTitles(): Promise<void> {
    for (const [id, title] of waitingTitles) {
      const index = listed.findIndex((chat) => chat.id === id);
      if (index === -1) continue;
      waitingTitles.delete(id);
      if (await directory.rename(id, title)) listed[index] = { ...(listed[index] as ChatListing), title };
    }
  }

  const state: ChatListState = {
    getSnapshot() {
      snapshot ??= build();
      return snapshot;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    refresh: () => read(listed.length),
    async loadMore() {
      const mine = ++reads;
      try {
        const page = await directory.list({ offset: listed.length, limit: pageSize });
        if (mine !== reads) return;
        const known = new Set(listed.map((chat) => chat.id));
        listed = [...listed, ...page.chats.filter((chat) => !known.has(chat.id))];
        total = page.total;
        error = null;
      } catch (caught) {
        if (mine !== reads) return;
        error = caught;
      }
      changed();
    },
    newChat() {
      const id = makeId();
      fresh = [id, ...fresh];
      changed();
      return id;
    },
    keep(chatId) {
      if (status === "loading" || fresh.includes(chatId) || listed.some((chat) => chat.id === chatId)) return;
      fresh = [chatId, ...fresh];
      changed();
    },
    async rename(chatId, title) {
      if (fresh.includes(chatId)) {
        // Nothing is written to it yet: the title waits for its first message.
        waitingTitles.set(chatId, title.trim() || newTitle);
        changed();
        return;
      }
      const before = listed;
      listed = listed.map((chat) => (chat.id === chatId ? { ...chat, title: title.trim() } : chat));
      changed();
      try {
        await directory.rename(chatId, title);
        error = null;
        await read(listed.length);
      } catch (caught) {
        listed = before;
        error = caught;
        changed();
      }
    },
    async remove(chatId) {
      if (fresh.includes(chatId)) {
        fresh = fresh.filter((id) => id !== chatId);
        waitingTitles.delete(chatId);
        changed();
        return;
      }
      const before = { listed, total };
      listed = listed.filter((chat) => chat.id !== chatId);
      total = Math.max(0, total - 1);
      changed();
      try {
        await directory.remove(chatId);
        error = null;
        changed();
      } catch (caught) {
        ({ listed, total } = before);
        error = caught;
        changed();
      }
    },
  };
  void read(pageSize);
  return state;
}
