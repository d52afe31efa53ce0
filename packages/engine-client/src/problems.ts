import type { ModelInfo } from "./messages.js";

/** The one thing a TurnProblem card offers the person. */
export type NextStep =
  | {
      readonly type: "switch-model";
      readonly model: ModelInfo /** How many times more the model reads. */;
      readonly readsTimes?: number;
    }
  | {
      readonly type: "new-chat" /** The person's message, carried into the new chat's box. */;
      readonly message: string;
    }
  | { readonly type: "retry" }
  | { readonly type: "retry-after"; readonly seconds: number }
  | { readonly type: "open-settings"; readonly section?: "provider" | "models" | "billing" };

export type NextStepType = NextStep["type"];

interface ProblemBase {
  /** A short title for the card, in English (hosts may replace it through Nacre's messages). */
  readonly title: string;
  /** The provider's own words, when there are any. */
  readonly providerMessage?: string;
  /** The HTTP status, when the problem came from one. */
  readonly status?: number;
  /** Exactly one suggested next step. */
  readonly next: NextStep;
}

/** Why a turn could not be answered. Discriminated by `kind`; switch over it exhaustively. */
export type TurnProblem =
  | (ProblemBase & {
      readonly kind: "too-long";
      readonly next: Extract<NextStep, { type: "switch-model" | "new-chat" }>;
      /** The window the provider named, when it named one. */
      readonly window?: number;
      /** The prompt tokens the provider counted, when its refusal said. */
      readonly countedTokens?: number;
      /** What the engine's estimate put the same request at (× the chat's factor). */
      readonly estimatedTokens?: number;
    })
  | (ProblemBase & { readonly kind: "auth"; readonly next: Extract<NextStep, { type: "open-settings" }> })
  | (ProblemBase & {
      readonly kind: "rate-limited";
      readonly next: Extract<NextStep, { type: "retry-after" | "retry" }>;
    })
  | (ProblemBase & { readonly kind: "quota"; readonly next: Extract<NextStep, { type: "open-settings" }> })
  | (ProblemBase & {
      readonly kind: "model-unavailable";
      readonly next: Extract<NextStep, { type: "switch-model" | "open-settings" }>;
    })
  | (ProblemBase & { readonly kind: "offline"; readonly next: Extract<NextStep, { type: "retry" }> })
  | (ProblemBase & { readonly kind: "refused"; readonly next: Extract<NextStep, { type: "new-chat" | "retry" }> })
  | (ProblemBase & { readonly kind: "provider-error"; readonly next: Extract<NextStep, { type: "retry" }> });

export type TurnProblemKind = TurnProblem["kind"];

export const turnProblemKinds: readonly TurnProblemKind[] = [
  "too-long",
  "auth",
  "rate-limited",
  "quota",
  "model-unavailable",
  "offline",
  "refused",
  "provider-error",
];

/** The default English title for each kind. */
export function defaultProblemTitle(kind: TurnProblemKind): string {
  switch (kind) {
    case "too-long":
      return "This chat is too long for the model";
    case "auth":
      return "The provider did not accept the key";
    case "rate-limited":
      return "The provider asked to slow down";
    case "quota":
      return "The provider's quota or credit is used up";
    case "model-unavailable":
      return "The model is not available";
    case "offline":
      return "The provider could not be reached";
    case "refused":
      return "The model declined to answer";
    case "provider-error":
      return "The provider returned an error";
    default:
      return kind satisfies never;
  }
}
