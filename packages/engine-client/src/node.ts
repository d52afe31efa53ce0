// Node-only parts (file system stores). Kept out of the main entry so that it runs in a browser.

export { ChatStoreLockedError } from "./errors.js";
export { createFileChatDirectory } from "./transcript/file-chat-directory.node.js";
export {
  createFileChatStore,
  type FileChatStore,
  type FileChatStoreOptions,
} from "./transcript/file-store.node.js";
export { type FolderLock, lockFolder } from "./transcript/folder-lock.node.js";
