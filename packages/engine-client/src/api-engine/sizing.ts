import { type Budget, computeBudget } from "../context/budget.js";
import { modelFamily } from "../context/estimate.js";
import { sizingFactorForModel } from "../context/factor.js";
import { type CountedTranscript, type FoldMode, type FoldPlan, planFold } from "../context/fold.js";
import { resolveWindow } from "../context/window.js";
import type { ContextUsage } from "../engine.js";
import type { ChatMessage, ModelInfo } from "../messages.js";
import type { ChatRuntime } from "./chat-state.js";
import type { EngineParts } from "./engine-parts.js";

/**
 * How the next request is sized: the model, its tokenizer family and factor, the fixed costs, and the budget.
 * `budget.window` is the model's window (what a too-long card compares); `budget.budget` is what the
 * transcript may use (bounded by the 100K cap). The two are never swapped.
 */
export interface Sizing {
  readonly modelId: string;
  readonly info: ModelInfo;
  readonly family: string | undefined;
  readonly factor: number;
  readonly systemTokens: number;
  readonly toolTokens: number;
  readonly budget: Budget;
}

/**
 * Sizes the next request; `refusedWindow` is the window a refusal just named (used as is, not looked up again).
 * A remembered or refused window below what a request to the model already served is doubtful and not used.
 */
export async function sizeRequest(parts: EngineParts, rt: ChatRuntime, refusedWindow?: number): Promise<Sizing> {
  const { provider } = parts;
  const model = parts.model();
  const info = parts.modelInfo(await parts.listModels(), model);
  const family = modelFamily(model);
  const evidence = parts.windowEvidence;
  const stored = evidence.believable(model, provider.windows.get(provider.provider, model));
  const refused = evidence.believable(model, refusedWindow);
  const remembered = Math.min(stored ?? Number.POSITIVE_INFINITY, refused ?? Number.POSITIVE_INFINITY);
  const { window } = resolveWindow({
    model: info,
    remembered: Number.isFinite(remembered) ? remembered : null,
    local: provider.local,
  });
  const factor = sizingFactorForModel(rt.factor, model);
  const { systemTokens, toolTokens } = parts.fixedTokens(family);
  const answerRoom = rt.answerRooms[model];
  const budget = computeBudget({
    window,
    systemTokens,
    toolTokens,
    factor,
    ...(answerRoom !== undefined ? { answerRoom } : {}),
  });
  return { modelId: model, info, family, factor, systemTokens, toolTokens, budget };
}

/**
 * The provider's count of the chat's last request and answer, as the planner takes it (`FoldInput.counted`): the
 * transcript's part, the system prompt and tools taken off at estimate × factor. Undefined when there is none for
 * this model.
 */
function countedFor(rt: ChatRuntime, size: Sizing): CountedTranscript | undefined {
  const last = rt.lastCount;
  if (last === null || last.modelId !== size.modelId) return undefined;
  const fixed = size.factor * (size.systemTokens + size.toolTokens);
  return { seqs: last.seqs, summary: last.summary, tokens: Math.max(0, last.tokens - fixed) };
}

/** The fold plan of the chat at this sizing (of `messages`: its log, or its log and a message to come). */
export function planFor(
  rt: ChatRuntime,
  size: Sizing,
  mode: FoldMode,
  messages: readonly ChatMessage[] = rt.log,
): FoldPlan {
  const counted = countedFor(rt, size);
  return planFold({
    messages,
    summary: rt.summary?.text ?? null,
    budget: size.budget.budget,
    mode,
    previous: rt.fold,
    family: size.family,
    factor: size.factor,
    cache: rt.cache,
    ...(counted !== undefined ? { counted } : {}),
  });
}

/** How much of the model's window the planned request uses. */
export function contextUsageOf(size: Sizing, planned: FoldPlan): ContextUsage {
  const usedTokens = Math.ceil((size.systemTokens + size.toolTokens) * size.factor + planned.tokens);
  const window = size.budget.window;
  return {
    usedTokens,
    window,
    budget: size.budget.budget,
    factor: size.factor,
    share: window > 0 ? usedTokens / window : 1,
  };
}

/** Sizes, plans and measures the chat as its next request would be: what `usage` and snapshots report. */
export async function measureChat(parts: EngineParts, rt: ChatRuntime): Promise<{ size: Sizing; usage: ContextUsage }> {
  const size = await sizeRequest(parts, rt);
  return { size, usage: contextUsageOf(size, planFor(rt, size, "auto")) };
}
