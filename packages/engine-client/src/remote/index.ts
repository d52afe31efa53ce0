export { RemoteEngineError } from "../errors.js";
export type {
  WireAbortResponse,
  WireBranchRequest,
  WireCapabilities,
  WireChatList,
  WireChatListing,
  WireChatPage,
  WireCompactRequest,
  WireCompactResponse,
  WireModels,
  WireProblem,
  WireProblemName,
  WireRenameRequest,
  WireRenameResponse,
  WireTurnRequest,
} from "../protocol/wire.js";
export { protocolVersion } from "../protocol/wire.js";
export type { ChatDirectory, ChatListing, ChatListPage } from "../transcript/chat-directory.js";
export { createRemoteEngine, type RemoteEngine, type RemoteEngineOptions } from "./remote-engine.js";
