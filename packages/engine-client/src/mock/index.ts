export { chatLogFrom, generateLongChatScript, type LongChatOptions, type LongChatScript } from "./long-chat.js";
export {
  createMockEngine,
  type MockChatSeed,
  type MockEngine,
  type MockEngineScript,
  type MockTurnScript,
  type MockTurns,
} from "./mock-engine.js";
