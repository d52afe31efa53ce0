export { MessageListItems as Items, MessageListRoot as Root } from "../message-list.js";
