export { chatLogFrom, generateLongChatScript, type LongChatOptions, type LongChatScript } from "./long-chat.js";
export {
  createMockChatStore,
  createMockEngine,
  type MockChatSeed,
  type MockChatStore,
  type MockEngine,
  type MockEngineScript,
  type MockTurnScript,
  type MockTurns,
} from "./mock-engine.js";
