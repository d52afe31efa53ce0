import type { ProviderAdapter } from "../providers/provider-adapter.js";
import { isDoubtfulWindow, windowAfterSuccess } from "../providers/remembered-windows.js";

/**
 * What requests to each model have shown of its window (ADR 0055 §1, #14 fault 7): a window remembered from a
 * refusal is doubtful when a request larger than it already succeeded, and a success larger than the
 * remembered window raises it. A real small window (512 tokens) is never doubted on its own.
 */
export interface WindowEvidence {
  /** `window` unless it is doubtful for the model (a larger request to it succeeded); then undefined. */
  believable(modelId: string, window: number | undefined): number | undefined;
  /** After a success that served `tokens` (prompt and answer): returns the remembered window if this raised it. */
  served(modelId: string, tokens: number): number | undefined;
}

export function createWindowEvidence(provider: Pick<ProviderAdapter, "provider" | "windows">): WindowEvidence {
  const largestServed = new Map<string, number>();
  return {
    believable(modelId, window) {
      if (window === undefined) return undefined;
      return isDoubtfulWindow(window, largestServed.get(modelId)) ? undefined : window;
    },
    served(modelId, tokens) {
      if (!(Number.isFinite(tokens) && tokens > 0)) return undefined;
      largestServed.set(modelId, Math.max(largestServed.get(modelId) ?? 0, tokens));
      const remembered = provider.windows.get(provider.provider, modelId);
      const raised = windowAfterSuccess(remembered, tokens);
      if (raised === undefined || raised === remembered) return undefined;
      // The store keeps the smaller of two windows: forget the refused one before remembering the larger.
      provider.windows.forget(provider.provider, modelId);
      provider.windows.remember(provider.provider, modelId, raised);
      return raised;
    },
  };
}
