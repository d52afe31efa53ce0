// Test tooling (Node only, a private package that is never published): the engine-client tests, `pnpm dev`,
// `pnpm bench`, `pnpm simulate` and the end-to-end tests import it by name.

export {
  type ApiEngineUnderTest,
  apiEngineUnderTest,
} from "./api-engine-under-test.js";
export {
  type Conversation,
  conversationFromJson,
  conversationsDirectory,
  isLongConversation,
  loadConversationFile,
  loadConversations,
} from "./conversations.js";
export {
  type ContractTurn,
  type EngineSetup,
  type EngineUnderTest,
  engineContract,
  type MakeEngine,
} from "./engine-contract.js";
export { enginesUnderTest } from "./engines-under-test.js";
export type {
  FakeDialect,
  FakeModel,
  FakeOpenAIRow,
  FakeReply,
  FakeToolCall,
} from "./fake-provider-dialects.js";
export { startFakeProvider } from "./fake-provider-server.js";
export type {
  FakeChatRequest,
  FakeFailure,
  FakeProvider,
  FakeProviderOptions,
  FakeRecordedRequest,
  FakeRefusal,
  FakeReplySource,
} from "./fake-provider-types.js";
export { mockEngineUnderTest } from "./mock-engine-under-test.js";
export {
  firstTooLongBody,
  loadProviderErrorBodies,
  type ProviderErrorEntry,
  providerErrorBodiesURL,
} from "./provider-error-bodies.js";
export { createReplayScript, type ReplayScript, type ReplayStats, replayTurns } from "./replay.js";
export { type RecordedTurn, recordedTurns, scriptedSummaryReply } from "./scripted-models.js";
export { secretCorpus } from "./secret-corpus.js";
export { type SimulateOptions, type SimulateResult, simulateConversation } from "./simulate.js";
export { repositoryRoot, testFixturesDirectory, testFixturesPath } from "./test-fixtures.js";
export { countsOutputInWindow, type FakeRefusalBody, type OverWindow, tooLongBodyFor } from "./too-long-bodies.js";
