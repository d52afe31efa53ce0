/** The factor of a new chat, and of a chat whose model changed: the estimate as it is. */
export const initialFactor = 1;

/** `factor` when it is a positive finite number, else {@link initialFactor}: what a missing or meaningless factor means. */
export function usableFactor(factor: number | undefined): number {
  return factor !== undefined && Number.isFinite(factor) && factor > 0 ? factor : initialFactor;
}

/**
 * The chat's correction of the estimate after a response: `inputTokens / estimatedRequestTokens` when that
 * is higher than `previous`, else `previous`. It never comes down, because a provider that counts only what
 * it did not cache (Ollama) reports less than it read. Keep one per chat and model: start at
 * {@link initialFactor} and start again when the model changes (see {@link factorForModel}).
 * A missing or meaningless count (zero, negative, not finite) leaves the factor as it was.
 *
 * @param previous the factor so far (at least {@link initialFactor} is assumed when it is not a positive number).
 * @param inputTokens the provider's real `usage.inputTokens` for the request.
 * @param estimatedRequestTokens the estimate of that same request (system prompt, tools and messages), not × factor.
 */
export function raiseFactor(previous: number, inputTokens: number, estimatedRequestTokens: number): number {
  const current = usableFactor(previous);
  if (!(Number.isFinite(inputTokens) && inputTokens > 0)) return current;
  if (!(Number.isFinite(estimatedRequestTokens) && estimatedRequestTokens > 0)) return current;
  return Math.max(current, inputTokens / estimatedRequestTokens);
}

/** A chat's factor and the model it was learned on. */
export interface ModelFactor {
  readonly modelId: string;
  /** Every request's correction (see {@link raiseFactor}): kept as older readers read it, never lowered. */
  readonly factor: number;
  /**
   * The correction the chat is sized with: learned only from requests of at least {@link sizingRequestShare} of
   * the window (see {@link raiseSizingFactor}), so that a short request's ratio (a few words inside the chat
   * template's markers) does not govern long content. Only rises. Absent until such a request was answered.
   */
  readonly sizingFactor?: number;
  /**
   * The correction near the budget: learned only from requests of at least {@link nearBudgetShare} of the budget
   * (see {@link raiseNearBudgetFactor}). Such a request holds many messages of every kind the chat has, so it
   * carries the chat's own mix (a medium request can be mostly one script or one message's template). Only rises;
   * sized with in preference to `sizingFactor` once it exists.
   */
  readonly nearBudgetFactor?: number;
}

/**
 * A request smaller than this share of the window does not teach the sizing factor. Below it the chat template's
 * fixed cost per message dominates the ratio (measured on llama.cpp with a 512-token vocabulary: an 8-character
 * message ran 3.4–6.4× the estimate, long text 2.0–2.5×); such a request is far from the budget, where sizing
 * matters. A fold comes at most at the budget, so a chat always answers requests this big before its first fold.
 */
export const sizingRequestShare = 1 / 8;

/**
 * The sizing factor after a response: as {@link raiseFactor}, but only from a request whose real input is at
 * least {@link sizingRequestShare} of the window; `previous` (undefined: none learned yet) otherwise.
 */
export function raiseSizingFactor(
  previous: number | undefined,
  inputTokens: number,
  estimatedRequestTokens: number,
  window: number,
): number | undefined {
  if (!(Number.isFinite(inputTokens) && inputTokens >= sizingRequestShare * window)) return previous;
  if (!(Number.isFinite(estimatedRequestTokens) && estimatedRequestTokens > 0)) return previous;
  return raiseFactor(previous ?? initialFactor, inputTokens, estimatedRequestTokens);
}

/**
 * A request of at least this share of the transcript's budget teaches the near-budget factor. Measured on
 * llama-server with stories260K at 8,192 (#26, the bench's 30 round-robin turns): requests of 1,000–2,200 real
 * tokens (an English and a Chinese turn, each with its template) ran 2.73–2.76× the estimate, requests of half the
 * budget and more 2.35–2.47×; sized with the first, folds came at 64–68% of the window where the budget is 74%.
 */
export const nearBudgetShare = 1 / 2;

/**
 * The near-budget factor after a response: as {@link raiseFactor}, but only from a request whose real input is at
 * least {@link nearBudgetShare} of `budget` (the transcript's budget the request was sized with); `previous`
 * (undefined: none learned yet) otherwise.
 */
export function raiseNearBudgetFactor(
  previous: number | undefined,
  inputTokens: number,
  estimatedRequestTokens: number,
  budget: number,
): number | undefined {
  if (!(Number.isFinite(budget) && budget > 0)) return previous;
  if (!(Number.isFinite(inputTokens) && inputTokens >= nearBudgetShare * budget)) return previous;
  if (!(Number.isFinite(estimatedRequestTokens) && estimatedRequestTokens > 0)) return previous;
  return raiseFactor(previous ?? initialFactor, inputTokens, estimatedRequestTokens);
}

/**
 * The factor to size `modelId`'s requests with, when learned on the same model: the near-budget factor, else the
 * sizing factor (a chat that has answered no request near its budget yet), else the recorded factor (a chat that has
 * answered no large request yet, or one written before the sizing factor existed, until its first large request);
 * {@link initialFactor} otherwise.
 */
export function sizingFactorForModel(recorded: ModelFactor | null | undefined, modelId: string): number {
  if (recorded === null || recorded === undefined || recorded.modelId !== modelId) return initialFactor;
  return usableFactor(recorded.nearBudgetFactor ?? recorded.sizingFactor ?? recorded.factor);
}

/**
 * The chat's record after a believed usage report (or a refusal that named what was sent) of a request to
 * `modelId` with this estimate, in a window of `window` tokens sized to a budget of `budget`: every figure raised
 * as it may be.
 */
export function learnFactors(
  recorded: ModelFactor | null | undefined,
  input: {
    readonly modelId: string;
    readonly inputTokens: number;
    readonly estimatedRequestTokens: number;
    readonly window: number;
    readonly budget: number;
  },
): ModelFactor {
  const same = recorded !== null && recorded !== undefined && recorded.modelId === input.modelId ? recorded : null;
  const factor = raiseFactor(same?.factor ?? initialFactor, input.inputTokens, input.estimatedRequestTokens);
  const sizingFactor = raiseSizingFactor(
    same?.sizingFactor,
    input.inputTokens,
    input.estimatedRequestTokens,
    input.window,
  );
  const nearBudgetFactor = raiseNearBudgetFactor(
    same?.nearBudgetFactor,
    input.inputTokens,
    input.estimatedRequestTokens,
    input.budget,
  );
  return {
    modelId: input.modelId,
    factor,
    ...(sizingFactor !== undefined ? { sizingFactor } : {}),
    ...(nearBudgetFactor !== undefined ? { nearBudgetFactor } : {}),
  };
}

/**
 * The factor to use for `modelId`: the recorded one when it was learned on the same model, else
 * {@link initialFactor} (a factor learned on one tokenizer says nothing of another).
 */
export function factorForModel(recorded: ModelFactor | null | undefined, modelId: string): number {
  return recorded !== null && recorded !== undefined && recorded.modelId === modelId ? recorded.factor : initialFactor;
}

/** No tokenizer counts more than this many times the estimate (measured: the estimate is at most ~1.6× short). */
export const maximumPlausibleFactor = 8;

/** Why a usage report cannot be applied to the factor, or null when it can. */
export type ImplausibleUsage = "over-window" | "factor-too-high";

/**
 * Whether a usage report is one no real request could produce: more input than the window allows (a
 * provider that accepted it would have refused it), or a factor far beyond any tokenizer's. Such a report is
 * ignored (with a health note) instead of raising the factor for good: the factor only ever rises (ADR §1),
 * so one bad number would otherwise disable the model.
 */
export function implausibleUsage(input: {
  readonly inputTokens: number;
  readonly estimatedRequestTokens: number;
  readonly window: number | undefined;
}): ImplausibleUsage | null {
  const { inputTokens, estimatedRequestTokens, window } = input;
  if (window !== undefined && Number.isFinite(window) && window > 0 && inputTokens > window) return "over-window";
  if (estimatedRequestTokens > 0 && inputTokens / estimatedRequestTokens > maximumPlausibleFactor) {
    return "factor-too-high";
  }
  return null;
}
