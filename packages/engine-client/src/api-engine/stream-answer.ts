import { raiseFactor } from "../context/factor.js";
import { isAbortError } from "../errors.js";
import type { EngineEventOf } from "../events.js";
import type { Answer } from "../kit/answer.js";
import type { Turn } from "../kit/turn-runner.js";
import { addUsage, type ChatMessage, type Usage } from "../messages.js";
import type { TurnProblem } from "../problems.js";
import type { FinishReason } from "../providers/provider-adapter.js";
import { ProviderCallError } from "../providers/provider-call-error.js";
import type { TooLongRefusal } from "../providers/recognise-too-long.js";
import type { ChatRuntime } from "./chat-state.js";
import type { EngineParts } from "./engine-parts.js";
import type { TurnRequest } from "./request.js";
import type { Sizing } from "./sizing.js";

/** What a turn has spent and what its transcript keeps, as it goes. */
export interface TurnTally {
  usage: Usage;
  /** What the transcript keeps when the turn ends: the plan's kept messages, and the answer once in the log. */
  kept: readonly ChatMessage[];
}

/** How one attempt ended: answered, refused as too long before any word (healable), or failed. */
export type AttemptOutcome =
  | { readonly type: "answered"; readonly finish: FinishReason | null }
  | { readonly type: "refused"; readonly refusal: TooLongRefusal; readonly error: ProviderCallError }
  | { readonly type: "failed"; readonly problem: TurnProblem };

/** One attempt at the turn's answer: the step every request of the turn goes through. */
export interface Attempt {
  readonly parts: EngineParts;
  readonly turn: Turn;
  readonly rt: ChatRuntime;
  readonly answer: Answer;
  readonly tally: TurnTally;
  readonly size: Sizing;
  readonly request: TurnRequest;
}

/**
 * Streams one request into the answer: words, reasoning and tool calls as they come, usage into the tally
 * (raising the factor, unless no real request could produce the report), and the window a success shows.
 * Aborts and errors other than the provider's are thrown.
 */
export async function streamAnswer(attempt: Attempt): Promise<AttemptOutcome> {
  const { answer, tally, rt } = attempt;
  let finish: FinishReason | null = null;
  try {
    for await (const part of attempt.parts.provider.streamChat(attempt.request.request)) {
      switch (part.type) {
        case "text-delta":
          answer.text(part.delta);
          break;
        case "thinking-delta":
          answer.thinking(part.delta, {
            ...(part.signature ? { signature: part.signature } : {}),
            ...(part.redacted ? { redacted: true } : {}),
          });
          break;
        case "tool-call":
          answer.toolCall(part);
          break;
        case "usage":
          tally.usage = addUsage(tally.usage, part.usage);
          learnFromUsage(attempt, part.usage);
          attempt.turn.send({ type: "usage", chatId: rt.chatId, usage: tally.usage });
          break;
        case "finish":
          finish = part.reason;
          break;
        default:
          part satisfies never;
      }
    }
  } catch (error) {
    if (isAbortError(error) || !ProviderCallError.isInstance(error)) throw error;
    const refusal = error.tooLong;
    // A refusal after words have arrived is not retried: what was written stays.
    if (refusal === null || error.afterOutput || answer.started) return { type: "failed", problem: error.problem };
    return { type: "refused", refusal, error };
  }
  return { type: "answered", finish };
}

/** Raises the chat's factor from a usage report. Returns whether the report was believed. */
function learnFromUsage(attempt: Attempt, usage: Usage): boolean {
  const { size, rt, request } = attempt;
  rt.factor = { modelId: size.modelId, factor: raiseFactor(size.factor, usage.inputTokens, request.estimatedTokens) };
  return true;
}

/** Puts what the answer holds in the log and says `message-end`. */
export async function keepAnswer(
  attempt: Pick<Attempt, "parts" | "rt" | "answer" | "tally">,
  finishReason: EngineEventOf<"message-end">["finishReason"],
): Promise<void> {
  const { parts, rt, answer, tally } = attempt;
  const message = answer.message(parts.now());
  await parts.store.appendLog(rt.chatId, [message]);
  rt.log.push(message);
  tally.kept = [...tally.kept, message];
  answer.end(message, finishReason);
}
