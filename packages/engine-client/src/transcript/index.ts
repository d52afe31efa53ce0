// The chat's log and the engine's transcript file, and the stores that keep them. The file-system store is
// Node-only and lives in `@conch/engine-client/node`, so this entry runs in a browser.

export {
  ChatLogCorruptError,
  ChatStoreReadError,
  ChatStoreWriteError,
  InvalidChatRecordError,
  TranscriptCorruptError,
} from "../errors.js";
export type {
  ChatReading,
  ChatStore,
  LogPageRequest,
  ReadChatOptions,
  ReadTranscriptOptions,
} from "./chat-store.js";
export {
  createIndexedDbChatStore,
  type IndexedDbChatStore,
  type IndexedDbChatStoreOptions,
  type IndexedDbCorruptRecord,
} from "./indexeddb-store.js";
export { createMemoryChatStore } from "./memory-store.js";
export {
  buildTranscriptFile,
  keptSeqs,
  keptStart,
  type TranscriptFile,
  type TranscriptFileInput,
  type TranscriptMessage,
} from "./transcript-file.js";
