export {
  MessageListAnnouncer as Announcer,
  MessageListItems as Items,
  MessageListJumpToLatest as JumpToLatest,
  MessageListJumpToMemoryStart as JumpToMemoryStart,
  MessageListRoot as Root,
} from "../message-list.js";
