"use client";
import { Slot } from "@radix-ui/react-slot";
import {
  type ComponentPropsWithoutRef,
  createContext,
  forwardRef,
  type KeyboardEvent,
  type ReactNode,
  useContext,
  useEffect,
  useRef,
  useState,
} from "react";
import { useConversation } from "../conversation.js";
import { NacreOutsideProviderError } from "../errors.js";
import { composeEventHandlers, composeRefs } from "../internal/primitives.js";
import type { ChatListEntry } from "./chat-list-state.js";
import type { UseChatsResult } from "./use-chats.js";

const ChatListContext = createContext<UseChatsResult | null>(null);

function useChatList(part: string): UseChatsResult {
  const chats = useContext(ChatListContext);
  if (!chats) throw new NacreOutsideProviderError(`<ChatList.${part}>`, "<ChatList.Root>");
  return chats;
}

export interface ChatListRootProps extends ComponentPropsWithoutRef<"nav"> {
  /** The list, from `useChats()`. */
  chats: UseChatsResult;
  /** Default: a `nav` named "Chats" holding `NewChat`, `List` and `More`. */
  children?: ReactNode;
  asChild?: boolean;
}

/**
 * A person's chats: `data-nacre-chat-list`, `data-status` (`loading`, `ready`, `failed`). A `nav` named "Chats"
 * unless `aria-label` or `asChild` says otherwise.
 */
export const ChatListRoot = forwardRef<HTMLElement, ChatListRootProps>(function ChatListRoot(
  { chats, asChild, children, ...props },
  ref,
) {
  const Component = asChild ? Slot : "nav";
  return (
    <ChatListContext.Provider value={chats}>
      <Component aria-label="Chats" data-nacre-chat-list="" data-status={chats.status} {...props} ref={ref}>
        {children ?? (
          <>
            <ChatListNewChat />
            <ChatListList />
            <ChatListMore />
          </>
        )}
      </Component>
    </ChatListContext.Provider>
  );
});
ChatListRoot.displayName = "ChatList.Root";

export interface ChatListNewChatProps extends ComponentPropsWithoutRef<"button"> {
  asChild?: boolean;
}

/** Makes a chat and opens it (listed at once as "New chat"): `data-nacre-new-chat`. */
export const ChatListNewChat = forwardRef<HTMLButtonElement, ChatListNewChatProps>(function ChatListNewChat(
  { asChild, children, onClick, ...props },
  ref,
) {
  const chats = useChatList("NewChat");
  const Component = asChild ? Slot : "button";
  return (
    <Component
      type="button"
      data-nacre-new-chat=""
      {...props}
      onClick={composeEventHandlers(onClick, () => {
        chats.newChat();
      })}
      ref={ref}
    >
      {children ?? "New chat"}
    </Component>
  );
});
ChatListNewChat.displayName = "ChatList.NewChat";

export interface ChatListListProps extends ComponentPropsWithoutRef<"ul"> {
  /** Shown when there are no chats. Default: "No chats yet." */
  empty?: ReactNode;
  asChild?: boolean;
}

const selectSelector = "[data-nacre-chat-list-select]";

/**
 * The chats, new ones first, then newest first: `data-nacre-chat-list-items`. One Tab stop (the open chat); the
 * arrow keys, Home and End move between chats, Enter opens one, F2 renames it, Delete asks to remove it.
 */
export const ChatListList = forwardRef<HTMLUListElement, ChatListListProps>(function ChatListList(
  { empty, asChild, children, onKeyDown, ...props },
  ref,
) {
  const chats = useChatList("List");
  if (chats.status === "loading" && children === undefined) {
    return (
      <p data-nacre-chat-list-loading="" role="status">
        Loading chats…
      </p>
    );
  }
  if (chats.chats.length === 0 && children === undefined) {
    return <p data-nacre-chat-list-empty="">{empty ?? "No chats yet."}</p>;
  }
  const Component = asChild ? Slot : "ul";
  return (
    <Component
      data-nacre-chat-list-items=""
      {...props}
      onKeyDown={composeEventHandlers(onKeyDown, (event: KeyboardEvent<HTMLUListElement>) => {
        const buttons = [...event.currentTarget.querySelectorAll<HTMLElement>(selectSelector)];
        const at = buttons.indexOf(document.activeElement as HTMLElement);
        if (at === -1) return;
        const to =
          event.key === "ArrowDown"
            ? Math.min(at + 1, buttons.length - 1)
            : event.key === "ArrowUp"
              ? Math.max(at - 1, 0)
              : event.key === "Home"
                ? 0
                : event.key === "End"
                  ? buttons.length - 1
                  : null;
        if (to === null) return;
        event.preventDefault();
        buttons[to]?.focus();
      })}
      ref={ref}
    >
      {children ?? chats.chats.map((chat) => <ChatListItem key={chat.id} chat={chat} />)}
    </Component>
  );
});
ChatListList.displayName = "ChatList.List";

export interface ChatListItemProps extends ComponentPropsWithoutRef<"li"> {
  chat: ChatListEntry;
  asChild?: boolean;
}

type ItemMode = "shown" | "renaming" | "confirming";

/**
 * One chat: `data-nacre-chat-list-item`, `data-current` on the open one (whose button has `aria-current="page"`),
 * `data-new` on a chat with no message yet, `data-mode` (`shown`, `renaming`, `confirming` a removal). Holds the
 * button that opens it, and Rename and Delete.
 */
export const ChatListItem = forwardRef<HTMLLIElement, ChatListItemProps>(function ChatListItem(
  { chat, asChild, children, ...props },
  ref,
) {
  const chats = useChatList("Item");
  const [mode, setMode] = useState<ItemMode>("shown");
  const isCurrent = chat.id === chats.current;
  // The one Tab stop: the open chat, else the first.
  const tabStop = chats.chats.some((entry) => entry.id === chats.current) ? isCurrent : chats.chats[0]?.id === chat.id;
  const selectRef = useRef<HTMLButtonElement>(null);
  const itemRef = useRef<HTMLLIElement>(null);
  const returnFocus = useRef(false);
  useEffect(() => {
    if (mode === "shown" && returnFocus.current) {
      returnFocus.current = false;
      selectRef.current?.focus();
    }
  }, [mode]);
  const back = () => {
    returnFocus.current = true;
    setMode("shown");
  };
  const Component = asChild ? Slot : "li";
  return (
    <Component
      data-nacre-chat-list-item=""
      data-mode={mode}
      {...(isCurrent ? { "data-current": "" } : {})}
      {...(chat.isNew ? { "data-new": "" } : {})}
      {...props}
      ref={composeRefs(ref, itemRef)}
    >
      {children ??
        (mode === "renaming" ? (
          <RenameField
            chat={chat}
            onDone={(title) => {
              if (title !== null && title !== chat.title) void chats.rename(chat.id, title);
              back();
            }}
          />
        ) : (
          <>
            <button
              ref={selectRef}
              type="button"
              data-nacre-chat-list-select=""
              tabIndex={tabStop ? 0 : -1}
              aria-current={isCurrent ? "page" : undefined}
              aria-keyshortcuts="F2 Delete"
              onClick={() => chats.select(chat.id)}
              onKeyDown={(event) => {
                if (event.key === "F2") {
                  event.preventDefault();
                  setMode("renaming");
                } else if (event.key === "Delete") {
                  event.preventDefault();
                  setMode("confirming");
                }
              }}
            >
              <span data-nacre-chat-list-title="" dir="auto">
                {chat.title}
              </span>
            </button>
            {mode === "confirming" ? (
              <ConfirmRemoval
                chat={chat}
                onKeep={back}
                onRemove={() => {
                  // The focus goes to the chat beside it (else New chat), not to the page's start.
                  const list = itemRef.current?.closest("[data-nacre-chat-list]");
                  const buttons = [...(list?.querySelectorAll<HTMLElement>(selectSelector) ?? [])];
                  const at = buttons.indexOf(selectRef.current as HTMLElement);
                  const beside =
                    buttons[at + 1] ?? buttons[at - 1] ?? list?.querySelector<HTMLElement>("[data-nacre-new-chat]");
                  beside?.focus();
                  void chats.remove(chat.id);
                }}
              />
            ) : (
              <span data-nacre-chat-list-actions="">
                <button
                  type="button"
                  data-nacre-chat-list-rename=""
                  tabIndex={-1}
                  aria-label={`Rename “${chat.title}”`}
                  title="Rename (F2)"
                  onClick={() => setMode("renaming")}
                >
                  Rename
                </button>
                <button
                  type="button"
                  data-nacre-chat-list-delete=""
                  tabIndex={-1}
                  aria-label={`Delete “${chat.title}”`}
                  title="Delete (Del)"
                  onClick={() => setMode("confirming")}
                >
                  Delete
                </button>
              </span>
            )}
          </>
        ))}
    </Component>
  );
});
ChatListItem.displayName = "ChatList.Item";

/** The title in a text box: Enter keeps it, Escape goes back unchanged; leaving the box keeps it too. */
function RenameField({ chat, onDone }: { chat: ChatListEntry; onDone: (title: string | null) => void }) {
  const [value, setValue] = useState(chat.title);
  const done = useRef(false);
  const finish = (title: string | null) => {
    if (done.current) return;
    done.current = true;
    onDone(title === null || title.trim() === "" ? null : title);
  };
  return (
    <input
      data-nacre-chat-list-title-input=""
      aria-label={`Title of “${chat.title}”`}
      value={value}
      maxLength={200}
      // biome-ignore lint/a11y/noAutofocus: the box opens on the person's own Rename, where their focus was
      autoFocus
      onFocus={(event) => event.currentTarget.select()}
      onChange={(event) => setValue(event.target.value)}
      onKeyDown={(event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          finish(value);
        } else if (event.key === "Escape") {
          event.preventDefault();
          finish(null);
        }
      }}
      onBlur={() => finish(value)}
    />
  );
}

/** "Delete this chat?" with Delete and Keep; Keep has the focus, and Escape keeps the chat. */
function ConfirmRemoval({ chat, onKeep, onRemove }: { chat: ChatListEntry; onKeep: () => void; onRemove: () => void }) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of two buttons with its question as the name
    <span
      role="group"
      aria-label={`Delete “${chat.title}”?`}
      data-nacre-chat-list-confirm=""
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          event.preventDefault();
          onKeep();
        }
      }}
    >
      <span data-nacre-chat-list-confirm-text="">Delete this chat?</span>{" "}
      <button type="button" data-nacre-chat-list-confirm-delete="" onClick={onRemove}>
        Delete
      </button>{" "}
      {/* biome-ignore lint/a11y/noAutofocus: the question opens on the person's own Delete; Keep is the safe answer */}
      <button type="button" data-nacre-chat-list-confirm-keep="" autoFocus onClick={onKeep}>
        Keep
      </button>
    </span>
  );
}

export interface ChatListMoreProps extends ComponentPropsWithoutRef<"button"> {
  asChild?: boolean;
}

/** Reads the next page of chats: `data-nacre-chat-list-more`; nothing when every chat is listed. */
export const ChatListMore = forwardRef<HTMLButtonElement, ChatListMoreProps>(function ChatListMore(
  { asChild, children, onClick, ...props },
  ref,
) {
  const chats = useChatList("More");
  if (!chats.hasMore) return null;
  const Component = asChild ? Slot : "button";
  return (
    <Component
      type="button"
      data-nacre-chat-list-more=""
      {...props}
      onClick={composeEventHandlers(onClick, () => {
        void chats.loadMore();
      })}
      ref={ref}
    >
      {children ?? "More chats"}
    </Component>
  );
});
ChatListMore.displayName = "ChatList.More";

export interface NewChatGreetingProps extends ComponentPropsWithoutRef<"div"> {
  /** The greeting slot. Default: "Start a new chat: write your first message below." */
  children?: ReactNode;
  asChild?: boolean;
}

/**
 * A new chat's empty state, inside a `ConversationProvider`: shown while the chat holds no message, with the
 * host's greeting as its children. `data-nacre-new-chat-greeting`.
 */
export const NewChatGreeting = forwardRef<HTMLDivElement, NewChatGreetingProps>(function NewChatGreeting(
  { asChild, children, ...props },
  ref,
) {
  const conversation = useConversation();
  if (conversation.isLoading || conversation.messages.length > 0) return null;
  const Component = asChild ? Slot : "div";
  return (
    <Component data-nacre-new-chat-greeting="" {...props} ref={ref}>
      {children ?? <p>Start a new chat: write your first message below.</p>}
    </Component>
  );
});
NewChatGreeting.displayName = "NewChatGreeting";
