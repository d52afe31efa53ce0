export { ChatLeaseEndedError, EmptyTurnStreamError } from "../errors.js";
export type { ChatDirectory, ChatListing, ChatListPage } from "../transcript/chat-directory.js";
export { createEngineHandler, type EngineHandler } from "./handler.js";
export type { PersonLimits } from "./limits.js";
export type { Authorized, EngineHandlerOptions } from "./options.js";
export {
  type ChatActivity,
  type ChatKey,
  type ChatLease,
  createInProcessRunningTurns,
  type InProcessRunningTurnsOptions,
  type LeasePurpose,
  type NumberedEvent,
  type RunningTurns,
} from "./running-turns.js";
export type { OriginRules } from "./security.js";
