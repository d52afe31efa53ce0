import { type AnthropicSettings, createAnthropic } from "./anthropic.js";
import { createGoogle, type GoogleSettings } from "./google.js";
import { createOllama, type OllamaSettings } from "./ollama.js";
import { createOpenAICompatible } from "./openai-compatible.js";
import type { ProviderAdapter, ProviderId } from "./provider-adapter.js";

/** Settings of any adapter (the fields a provider does not use are ignored). */
export type AnyProviderSettings = AnthropicSettings & GoogleSettings & OllamaSettings;

/** An adapter by provider id, for hosts that keep the provider as data (settings, `pnpm simulate`). */
export function createProvider(provider: ProviderId, settings: AnyProviderSettings = {}): ProviderAdapter {
  switch (provider) {
    case "anthropic":
      return createAnthropic(settings);
    case "google":
      return createGoogle(settings);
    case "ollama":
      return createOllama(settings);
    case "openai":
    case "mistral":
    case "deepseek":
    case "xai":
    case "groq":
    case "together":
    case "vllm":
    case "llama.cpp":
    case "lmstudio":
    case "openrouter":
    case "zhipu":
      return createOpenAICompatible({ ...settings, row: provider });
    default:
      return provider satisfies never;
  }
}
