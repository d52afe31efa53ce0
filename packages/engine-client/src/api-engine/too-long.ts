import { windowTakes } from "../context/budget.js";
import type { ModelInfo } from "../messages.js";
import { defaultProblemTitle, type TurnProblem } from "../problems.js";

/**
 * The too-long problem with its one next step: a ready model whose window reads at least half as much again
 * and takes `neededTokens`, else a new chat carrying `message`. `window` is the model's window, not its budget.
 */
export function tooLongWithNextStep(input: {
  readonly models: readonly ModelInfo[];
  readonly modelId: string;
  readonly window: number;
  readonly neededTokens: number;
  readonly message: string;
  readonly providerMessage?: string | undefined;
  /** What the provider counted (when its refusal says) against what the estimate said, for the card. */
  readonly tokens?: { readonly counted?: number | undefined; readonly estimated: number };
}): TurnProblem {
  const { window, neededTokens } = input;
  const bigger = input.models
    .filter(
      (candidate) =>
        candidate.ready &&
        candidate.id !== input.modelId &&
        candidate.context !== undefined &&
        candidate.context >= window * 1.5 &&
        windowTakes(candidate.context, neededTokens),
    )
    .sort((a, b) => (b.context ?? 0) - (a.context ?? 0))[0];
  const base = {
    kind: "too-long" as const,
    title: defaultProblemTitle("too-long"),
    window,
    ...(input.providerMessage ? { providerMessage: input.providerMessage } : {}),
    ...(input.tokens?.counted !== undefined ? { countedTokens: input.tokens.counted } : {}),
    ...(input.tokens ? { estimatedTokens: input.tokens.estimated } : {}),
  };
  if (bigger) {
    return {
      ...base,
      next: {
        type: "switch-model",
        model: bigger,
        readsTimes: Math.round(((bigger.context ?? window) / window) * 10) / 10,
      },
    };
  }
  return { ...base, next: { type: "new-chat", message: input.message } };
}
