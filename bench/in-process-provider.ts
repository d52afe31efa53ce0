import type { ModelInfo, ProviderAdapter } from "@conch/engine-client";

/** Options of {@link inProcessProvider}. */
export interface InProcessProviderOptions {
  /** The chat model's window (the summariser, `cheap`, has 128K). */
  readonly window: number;
  /** The text deltas of an answer from `model` (`chat` or `cheap`). */
  readonly answer: (model: string) => readonly string[];
  /** How long the summariser (`cheap`) takes a request before it answers. Default: at once. */
  readonly summariserMs?: number;
}

/**
 * A provider in the bench's own process that answers at once (the summariser after `summariserMs`), so that only
 * this project's work is timed: no HTTP, no tokenizer, a fixed usage.
 */
export function inProcessProvider({ window, answer, summariserMs = 0 }: InProcessProviderOptions): ProviderAdapter {
  const models: ModelInfo[] = [
    { id: "chat", displayName: "Chat", ready: true, local: false, context: window },
    { id: "cheap", displayName: "Cheap", ready: true, local: false, context: 128_000 },
  ];
  return {
    provider: "openrouter",
    local: false,
    baseURL: "http://in-process.invalid",
    cheapestModel: "cheap",
    windows: { get: () => undefined, set: () => undefined } as unknown as ProviderAdapter["windows"],
    listModels: async () => models,
    async *streamChat(request) {
      if (request.model === "cheap" && summariserMs > 0) {
        await new Promise((resolve) => setTimeout(resolve, summariserMs));
      }
      for (const delta of answer(request.model)) yield { type: "text-delta", delta };
      yield { type: "usage", usage: { inputTokens: 1_000, outputTokens: 10, cachedInputTokens: 0 } };
      yield { type: "finish", reason: "stop" };
    },
  } as ProviderAdapter;
}
