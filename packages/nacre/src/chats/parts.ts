export {
  ChatListItem as Item,
  ChatListList as List,
  ChatListMore as More,
  ChatListNewChat as NewChat,
  ChatListRoot as Root,
} from "./chat-list.js";
