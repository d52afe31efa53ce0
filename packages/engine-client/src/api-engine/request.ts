import type { FoldPlan } from "../context/fold.js";
import { buildRequestMessages } from "../context/frame.js";
import { type EstimateCache, estimateMessagesTokens } from "../context/message-estimate.js";
import type { SummaryState } from "../events.js";
import type { ChatRequest } from "../providers/provider-adapter.js";
import type { ApiEngineOptions } from "./options.js";
import type { Sizing } from "./sizing.js";

/** The request of one attempt at a turn, and its estimate (not × factor) to learn the factor from. */
export interface TurnRequest {
  readonly request: ChatRequest;
  /**
   * System prompt, tools and the messages as sent (the summary framed in them, the one a fold just wrote
   * included), estimated before the factor: what `usage.inputTokens` is compared to.
   */
  readonly estimatedTokens: number;
}

/**
 * Builds the request from the plan: the summary framed before the kept messages, the real system prompt and
 * tools, the answer room and the window, and the cache breakpoint at the end of the stable prefix (the
 * message before the newest turn's person message).
 */
export function buildTurnRequest(
  options: Pick<ApiEngineOptions, "systemPrompt" | "tools">,
  size: Sizing,
  planned: FoldPlan,
  summary: SummaryState | null,
  abortSignal: AbortSignal | undefined,
  cache?: EstimateCache,
): TurnRequest {
  const messages = buildRequestMessages(planned.kept, summary?.text || null);
  let turnStartIndex = messages.length - 1;
  while (turnStartIndex >= 0 && messages[turnStartIndex]?.role !== "user") turnStartIndex -= 1;
  return {
    request: {
      model: size.modelId,
      ...(options.systemPrompt ? { system: options.systemPrompt } : {}),
      messages,
      ...(options.tools?.length ? { tools: options.tools } : {}),
      maxOutputTokens: size.budget.answerRoom,
      contextWindow: size.budget.window,
      ...(turnStartIndex > 0 ? { cacheBreakpointIndex: turnStartIndex - 1 } : {}),
      ...(abortSignal ? { abortSignal } : {}),
    },
    // The messages as sent, not the plan's count: a fold just applied wrote a new summary the plan never saw.
    estimatedTokens: size.systemTokens + size.toolTokens + estimateMessagesTokens(messages, size.family, cache),
  };
}
