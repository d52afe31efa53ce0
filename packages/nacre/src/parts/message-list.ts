import {
  MessageListAnnouncer,
  MessageListItems,
  MessageListJumpToLatest,
  MessageListJumpToMemoryStart,
  MessageListRoot,
} from "../message-list.js";

/**
 * The parts by their short names (`MessageList.Root` = `MessageListRoot`): a plain object, which weighs less in
 * the core bundle than a module namespace.
 */
export const MessageList = {
  Announcer: MessageListAnnouncer,
  Items: MessageListItems,
  JumpToLatest: MessageListJumpToLatest,
  JumpToMemoryStart: MessageListJumpToMemoryStart,
  Root: MessageListRoot,
} as const;
