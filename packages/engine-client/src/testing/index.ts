// Test harness (Node only): excluded from the library build, reused by the summariser, API engine,
// `pnpm simulate` and the `pnpm dev` demo.

export {
  type Conversation,
  conversationFromJson,
  conversationsDirectory,
  loadConversationFile,
  loadConversations,
} from "./conversations.js";
export type {
  FakeDialect,
  FakeModel,
  FakeOpenAIRow,
  FakeReply,
  FakeToolCall,
} from "./fake-provider-dialects.js";
export {
  type FakeChatRequest,
  type FakeFailure,
  type FakeProvider,
  type FakeProviderOptions,
  type FakeRecordedRequest,
  type FakeRefusal,
  type FakeReplySource,
  startFakeProvider,
} from "./fake-provider-server.js";
export {
  firstTooLongBody,
  loadProviderErrorBodies,
  type ProviderErrorEntry,
  providerErrorBodiesURL,
} from "./provider-error-bodies.js";
export { createReplayScript, type ReplayScript, type ReplayStats, replayTurns } from "./replay.js";
export { type RecordedTurn, recordedTurns, scriptedSummaryReply } from "./scripted-models.js";
export { countsOutputInWindow, type FakeRefusalBody, type OverWindow, tooLongBodyFor } from "./too-long-bodies.js";
