// `@conch/engine-client/providers`: for writing or tuning a provider adapter (the spec's request and stream
// parts, the refusal classifier, remembered windows, the OpenAI-compatible rows). The factories themselves are
// in the root entry. Checked against api-surface/providers.txt, documented in docs/api.md.

export {
  type ChatRequest,
  createRememberedWindows,
  type FinishReason,
  isLocalBaseURL,
  type ListedModel,
  type ListModelsOptions,
  type OpenAICompatibleRow,
  type OpenAICompatibleRowId,
  openAICompatibleRowIds,
  openAICompatibleRows,
  type ProviderSettings,
  type ProviderStreamPart,
  type RememberedWindows,
  recogniseTooLong,
  type StorageLike,
  type TooLongRefusal,
  type ToolDefinition,
} from "./providers/index.js";
export { isProviderId, providerIds } from "./providers/provider-adapter.js";
