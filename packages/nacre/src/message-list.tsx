export { MessageListAnnouncer, type MessageListAnnouncerProps } from "./message-list-announcer.js";
export { MessageListItems, type MessageListItemsProps } from "./message-list-items.js";
export {
  type MessageListJumpProps,
  MessageListJumpToLatest,
  MessageListJumpToMemoryStart,
} from "./message-list-jump.js";
export { MessageListRoot, type MessageListRootProps } from "./message-list-root.js";
export type { MessageRenderProps, RenderMessage } from "./message-list-rows.js";
export type { StreamBlock, StreamingTextProps } from "./message-list-stream.js";
export { PlainStreamBlock, StreamingText } from "./message-list-stream.js";
