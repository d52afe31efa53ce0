export { RemoteEngineError } from "../errors.js";
export { createRemoteEngine, type RemoteEngine, type RemoteEngineOptions } from "./remote-engine.js";
export type {
  WireAbortResponse,
  WireCapabilities,
  WireChatList,
  WireChatListing,
  WireChatPage,
  WireCompactRequest,
  WireCompactResponse,
  WireModels,
  WireProblem,
  WireProblemName,
  WireTurnRequest,
} from "./wire.js";
export { protocolVersion } from "./wire.js";
