export * from "./api-engine/index.js";
export { type Channel, createChannel, delay } from "./channel.js";
export * from "./context/index.js";
export {
  type ConversationActivity,
  type ConversationCache,
  type ConversationStatus,
  ConversationStore,
  type SendOptions,
  type StreamingMessageState,
} from "./conversation/conversation-store.js";
export {
  type ChatSnapshot,
  type CompactOptions,
  type CompactResult,
  type ContextCapability,
  type ContextUsage,
  type Engine,
  type EngineCapabilities,
  type EngineListener,
  hasContext,
  onEngineEvent,
  type TurnInput,
  type TurnStream,
  type Unsubscribe,
} from "./engine.js";
export {
  assertSafeChatId,
  ChatBusyError,
  EngineClientError,
  InvalidChatIdError,
  isAbortError,
  TurnSequenceError,
} from "./errors.js";
export type {
  CompactedEvent,
  CompactingEvent,
  CompactionReason,
  CompactionSkippedEvent,
  EngineEvent,
  EngineEventOf,
  EngineEventType,
  HealedEvent,
  HealthNote,
  HealthNoteEvent,
  MessageEndEvent,
  MessageStartEvent,
  SummaryState,
  TextDeltaEvent,
  ThinkingDeltaEvent,
  ToolCallEvent,
  TranscriptSize,
  TurnEndEvent,
  TurnProblemEvent,
  TurnStartEvent,
  UsageEvent,
} from "./events.js";
export * from "./kit/index.js";
export * from "./learning/index.js";
export {
  addUsage,
  type ChatMessage,
  emptyUsage,
  type MessagePart,
  type MessageRole,
  type ModelInfo,
  messageText,
  type PicturePart,
  type TextPart,
  type ThinkingPart,
  type ToolCallPart,
  type ToolResultPart,
  textMessage,
  type Usage,
} from "./messages.js";
export {
  defaultProblemTitle,
  type NextStep,
  type NextStepType,
  type TurnProblem,
  type TurnProblemKind,
  turnProblemKinds,
} from "./problems.js";
export * from "./providers/index.js";
export * from "./summarise/index.js";
export * from "./transcript/index.js";
