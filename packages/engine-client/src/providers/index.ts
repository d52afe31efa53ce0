export { ProviderCallError, type ProviderCallErrorOptions } from "../errors.js";
export type { ListedModel, ModelListContext } from "./adapter-support.js";
export { type AnthropicSettings, createAnthropic, mapAnthropicStopReason } from "./anthropic.js";
export { type AnyProviderSettings, createProvider } from "./create-provider.js";
export { createGoogle, type GoogleSettings, mapGoogleFinishReason } from "./google.js";
export { isLocalBaseURL } from "./local-base-url.js";
export { createOllama, defaultOllamaContextWindow, type OllamaSettings } from "./ollama.js";
export {
  createDeepSeek,
  createGroq,
  createLlamaCpp,
  createLmStudio,
  createMistral,
  createOpenAI,
  createOpenAICompatible,
  createOpenRouter,
  createTogether,
  createVllm,
  createXai,
  createZhipu,
  type OpenAICompatibleSettings,
} from "./openai-compatible.js";
export {
  type OpenAICompatibleRow,
  type OpenAICompatibleRowId,
  openAICompatibleRowIds,
  openAICompatibleRows,
} from "./openai-compatible-rows.js";
export {
  type ChatRequest,
  type FinishReason,
  isProviderId,
  type ListModelsOptions,
  type ProviderAdapter,
  type ProviderId,
  type ProviderSettings,
  type ProviderStreamPart,
  providerIds,
  type ToolDefinition,
} from "./provider-adapter.js";
export { recogniseTooLong, type TooLongRefusal } from "./recognise-too-long.js";
export {
  createRememberedWindows,
  minimumRememberedWindow,
  type RememberedWindows,
  rememberedWindowsStorageKey,
  type StorageLike,
  smallerWindow,
} from "./remembered-windows.js";
