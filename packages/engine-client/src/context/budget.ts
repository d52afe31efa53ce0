import { usableFactor } from "./factor.js";

/** The share of the window that may be filled: the rest covers the estimate's error. */
export const windowMargin = 0.9;

/** The answer's room is this share of the window... */
export const answerRoomShare = 0.15;
/** ...at least this many tokens... */
export const minimumAnswerRoom = 1_000;
/** ...and at most this many. */
export const maximumAnswerRoom = 16_000;
/** ...except that in a small window (under 4,000 tokens) it takes at most this share, so that a prompt still fits. */
export const smallWindowAnswerShare = 0.25;

/** The transcript never gets more than this, whatever the window: every token is sent, and paid for, every turn. */
export const transcriptTokenCap = 100_000;

/** Below this share of the window left for the transcript, the host should go lean (short prompt, tools on demand). */
export const leanShare = 0.25;

/** Room for the answer in a window: 15% of it, clamped to [1,000, 16,000] tokens (a quarter of a window under 4,000). */
export function answerRoomFor(window: number): number {
  // The 1,000 floor is for ordinary windows; a small real one (512 tokens, llama-cpp-python's default) keeps a quarter.
  const floor = Math.min(minimumAnswerRoom, Math.floor(window * smallWindowAnswerShare));
  return Math.min(maximumAnswerRoom, Math.max(floor, Math.floor(window * answerRoomShare)));
}

/** Input of {@link computeBudget}. */
export interface BudgetInput {
  /** The model's window in tokens (see `resolveWindow`). */
  readonly window: number;
  /** Estimated tokens of the real system prompt, not × factor. Default 0. */
  readonly systemTokens?: number;
  /** Estimated tokens of the real tool list, not × factor. Default 0. */
  readonly toolTokens?: number;
  /** The chat's correction of the estimate. Default 1. */
  readonly factor?: number;
  /** Tokens kept for the answer; lower it when a provider refuses the output reservation. Default {@link answerRoomFor}(window). */
  readonly answerRoom?: number;
}

/**
 * Whether the system prompt and tools leave the transcript useful room:
 * `too-small` when less than {@link leanShare} of the window is left, so the host can go lean instead of failing.
 */
export type BudgetRoom = "enough" | "too-small";

/** What the transcript may use, in tokens as the window counts them (estimate × factor). */
export interface Budget {
  /** min(0.9 × window − answer room − system − tools, 100,000), never below 0. */
  readonly budget: number;
  /** The same without the 100,000 cap (may be negative): what the window itself leaves. */
  readonly uncapped: number;
  readonly answerRoom: number;
  readonly window: number;
  readonly room: BudgetRoom;
}

/**
 * The transcript's budget (ADR 0055 §1): min(0.9 × window − answer room − system prompt − tool list, 100,000),
 * with the prompt and tools as estimate × factor; answer room 15% of the window clamped to [1,000, 16,000].
 */
export function computeBudget(input: BudgetInput): Budget {
  const window = Math.max(0, input.window);
  const factor = usableFactor(input.factor);
  const answerRoom = Math.max(0, input.answerRoom ?? answerRoomFor(window));
  const fixed = factor * ((input.systemTokens ?? 0) + (input.toolTokens ?? 0));
  const uncapped = Math.floor(windowMargin * window - answerRoom - fixed);
  const budget = Math.max(0, Math.min(uncapped, transcriptTokenCap));
  return { budget, uncapped, answerRoom, window, room: uncapped < leanShare * window ? "too-small" : "enough" };
}

/**
 * Whether a model's window takes a request of `neededTokens` (everything sent, plus the answer's room) within
 * the margin, its own answer room kept: the test for a model to switch to. A window, not a budget: no 100K cap.
 */
export function windowTakes(window: number, neededTokens: number): boolean {
  return computeBudget({ window }).uncapped >= neededTokens;
}
