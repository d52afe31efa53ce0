import { implausibleUsage, learnFactors } from "../context/factor.js";
import type { FoldPlan } from "../context/fold.js";
import type { ProviderCallError } from "../errors.js";
import type { Turn } from "../kit/turn-runner.js";
import type { Usage } from "../messages.js";
import type { TurnProblem } from "../problems.js";
import type { TooLongRefusal } from "../providers/recognise-too-long.js";
import type { ChatRuntime } from "./chat-state.js";
import type { EngineParts } from "./engine-parts.js";
import { type FoldContext, planAndFold } from "./fold-step.js";
import type { TurnRequest } from "./request.js";
import { type Sizing, sizeRequest } from "./sizing.js";
import { tooLongWithNextStep } from "./too-long.js";

/** The smallest answer room a refusal of the output reservation lowers it to. */
const smallestLoweredAnswerRoom = 256;
/** Tokens left between the prompt and the window when the answer room is lowered to fit. */
const loweredAnswerRoomMargin = 64;

/**
 * Heals a "too long" refusal (ADR 0055 §3): sizes again with the window it named and plans the request again.
 * A refusal of the output reservation lowers the model's answer room when the window was right; a refusal of
 * the prompt folds more (`heal`), raising the factor first when it named the tokens sent but no window.
 */
export async function healAfterRefusal(
  context: FoldContext,
  input: {
    readonly turn: Turn;
    readonly rt: ChatRuntime;
    readonly size: Sizing;
    readonly request: TurnRequest;
    readonly refusal: TooLongRefusal;
  },
): Promise<{ size: Sizing; planned: FoldPlan; usage: Usage }> {
  const { parts } = context;
  const { turn, rt, request } = input;
  // A window below what this model already served is doubtful (#14 fault 7): heal as if none was named.
  const refusal = believableRefusal(parts, input.size.modelId, input.refusal);
  const fold = (size: Sizing, mode: "auto" | "heal") =>
    planAndFold(context, rt, size, mode, turn.input.abortSignal, turn.send).then((done) => ({ size, ...done }));
  if (refusal.cause === "output") {
    const usedWindow = input.size.budget.window;
    const size = await sizeRequest(parts, rt, refusal.window);
    // A window smaller than the one planned with is news enough: its own answer room applies.
    // Only when the window was right is the answer room itself too big for this request.
    if (size.budget.window < usedWindow) return fold(size, "auto");
    const window = refusal.window ?? usedWindow;
    const inputTokens = refusal.inputTokens ?? Math.ceil(request.estimatedTokens * size.factor);
    rt.answerRooms[size.modelId] = Math.max(
      smallestLoweredAnswerRoom,
      Math.min(Math.floor(size.budget.answerRoom / 2), window - inputTokens - loweredAnswerRoomMargin),
    );
    return fold(await sizeRequest(parts, rt, refusal.window), "auto");
  }
  let size = await sizeRequest(parts, rt, refusal.window);
  const named = refusal.inputTokens;
  if (
    named !== undefined &&
    refusal.window === undefined &&
    implausibleUsage({ inputTokens: named, estimatedRequestTokens: request.estimatedTokens, window: undefined }) ===
      null
  ) {
    // The refusal named what was sent but no window: the estimate was short; raise the factor.
    rt.factor = learnFactors(rt.factor, {
      modelId: size.modelId,
      inputTokens: named,
      estimatedRequestTokens: request.estimatedTokens,
      window: size.budget.window,
      budget: size.budget.budget,
    });
    size = await sizeRequest(parts, rt, refusal.window);
  }
  return fold(size, "heal");
}

/**
 * The refusal as far as it can be believed: a window below what this model already served is doubtful, and so
 * are the other numbers of the same body; such a refusal heals as one that names nothing.
 */
export function believableRefusal(parts: EngineParts, modelId: string, refusal: TooLongRefusal): TooLongRefusal {
  if (refusal.window === undefined || parts.windowEvidence.believable(modelId, refusal.window) !== undefined) {
    return refusal;
  }
  return { cause: "input" };
}

/** A second refusal in one turn: the too-long problem, with the request's real need for its next step. */
export async function refusedAgainProblem(
  parts: EngineParts,
  size: Sizing,
  request: TurnRequest,
  carriedMessage: string,
  error: ProviderCallError,
): Promise<TurnProblem> {
  return tooLongWithNextStep({
    models: await parts.listModels(),
    modelId: size.modelId,
    window: size.budget.window,
    neededTokens: Math.ceil(request.estimatedTokens * size.factor) + size.budget.answerRoom,
    message: carriedMessage,
    providerMessage: error.problem.providerMessage ?? error.message,
    tokens: { counted: error.tooLong?.inputTokens, estimated: Math.ceil(request.estimatedTokens * size.factor) },
  });
}

/** The system prompt and tools alone fill the window: no fold can help, and none is tried. */
export async function fixedCostsProblem(
  parts: EngineParts,
  size: Sizing,
  carriedMessage: string,
): Promise<TurnProblem> {
  return tooLongWithNextStep({
    models: await parts.listModels(),
    modelId: size.modelId,
    window: size.budget.window,
    neededTokens: Math.ceil((size.systemTokens + size.toolTokens) * size.factor * 1.2),
    message: carriedMessage,
    providerMessage: "The system prompt and the tool list alone fill this model's window.",
  });
}

/** Says that the turn was healed: the `healed` event and its health note. */
export function sayHealed(parts: EngineParts, turn: Turn, rt: ChatRuntime, size: Sizing, window: number | null): void {
  const note = parts.addNote(
    rt,
    "healed",
    `${size.info.displayName} refused the request as too long${window ? ` (its window is ${window} tokens)` : ""}; it was shortened and sent again.`,
  );
  turn.send({
    type: "healed",
    chatId: rt.chatId,
    seq: turn.input.seq,
    provider: parts.provider.provider,
    model: size.modelId,
    ...(window ? { window } : {}),
  });
  turn.send({ type: "health-note", chatId: rt.chatId, note });
}
