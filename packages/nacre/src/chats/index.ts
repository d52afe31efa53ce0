// `@conch/nacre/chats`: a person's chats to switch between (useChats over a ChatDirectory, the ChatList parts),
// apart from the core so that a host with a list of its own carries none of it.

export {
  ChatListItem,
  type ChatListItemProps,
  ChatListList,
  type ChatListListProps,
  ChatListMore,
  type ChatListMoreProps,
  ChatListNewChat,
  type ChatListNewChatProps,
  ChatListRoot,
  type ChatListRootProps,
  NewChatGreeting,
  type NewChatGreetingProps,
} from "./chat-list.js";
export type { ChatListEntry, ChatListSnapshot, ChatListStatus } from "./chat-list-state.js";
export * as ChatList from "./parts.js";
export { type UseChatsOptions, type UseChatsResult, useChats } from "./use-chats.js";
