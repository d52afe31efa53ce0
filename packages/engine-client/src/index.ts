// `@conch/engine-client`: what a user of the README and docs needs to run an engine. Every name is listed here on
// purpose (no `export *`), checked against api-surface/index.txt and documented in docs/api.md. The pure
// context arithmetic is `@conch/engine-client/context`, adapter authoring `@conch/engine-client/providers`,
// the file store `@conch/engine-client/node`, the scripted engine `@conch/engine-client/mock`, the plumbing every
// engine is built on `@conch/engine-client/kit`.

// The API engine, and the handoff for engines that keep no transcript.
export { type ApiEngine, type ApiEngineOptions, createApiEngine } from "./api-engine/api-engine.js";
export { buildHandoff, type Handoff } from "./api-engine/handoff.js";
// The chat as a UI holds it: the React-free store Nacre reads through `useSyncExternalStore`, and the pure
// reducer over engine events that Nacre and a server share.
export {
  type ConversationActivity,
  type ConversationCache,
  type ConversationMessage,
  type ConversationStatus,
  ConversationStore,
  type MessageSiblings,
  type SendOptions,
  type StreamingMessageState,
} from "./conversation/conversation-store.js";
// The engine contract.
export {
  type BranchCapability,
  type ChatSnapshot,
  type CompactOptions,
  type CompactResult,
  type ContextCapability,
  type ContextUsage,
  type Engine,
  type EngineCapabilities,
  type EngineListener,
  hasBranches,
  hasContext,
  type LoadChatOptions,
  onEngineEvent,
  parseCompactCommand,
  type TurnInput,
  type TurnStream,
  type Unsubscribe,
} from "./engine.js";
export {
  assertSafeChatId,
  BranchCapabilityMissingError,
  ChatBusyError,
  ContextCapabilityMissingError,
  defaultErrorHandler,
  EngineClientError,
  type ErrorHandler,
  InvalidChatIdError,
  isAbortError,
  LearnerFailedError,
  TurnSequenceError,
} from "./errors.js";
export type {
  CompactionReason,
  EngineEvent,
  EngineEventOf,
  EngineEventType,
  HealthNote,
  SummaryState,
} from "./events.js";
export {
  foldedMessageCount,
  hasSomethingToFold,
  newestTurnStart,
  nextSeq,
  reduceChat,
  upsertMessage,
} from "./kit/index.js";
export { createMemoryLearner, type Learner, type MemoryLearner } from "./learning/index.js";

// Messages.
export {
  addUsage,
  type BranchMessage,
  type ChatMessage,
  emptyUsage,
  type MessageFinishReason,
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
// Providers: one factory each, or by id.
export {
  type AnthropicSettings,
  type AnyProviderSettings,
  createAnthropic,
  createDeepSeek,
  createGoogle,
  createGroq,
  createLlamaCpp,
  createLmStudio,
  createMistral,
  createOllama,
  createOpenAI,
  createOpenAICompatible,
  createOpenRouter,
  createProvider,
  createTogether,
  createVllm,
  createXai,
  createZhipu,
  type GoogleSettings,
  type OllamaSettings,
  type OpenAICompatibleSettings,
  type ProviderAdapter,
  ProviderCallError,
  type ProviderId,
} from "./providers/index.js";

// The summariser and the learner.
export { redactSecrets, type SummariseOptions, type SummariseResult, summariseFolded } from "./summarise/index.js";
// Stores of the chat's log and the transcript file (the file-system one is in `./node`).
export {
  buildTranscriptFile,
  ChatLogCorruptError,
  type ChatStore,
  ChatStoreReadError,
  ChatStoreWriteError,
  createIndexedDbChatStore,
  createMemoryChatStore,
  type IndexedDbChatStore,
  type IndexedDbChatStoreOptions,
  InvalidChatRecordError,
  TranscriptCorruptError,
  type TranscriptFile,
} from "./transcript/index.js";
