import { implausibleUsage, learnFactors } from "../context/factor.js";
import { isAbortError, ProviderCallError } from "../errors.js";
import type { EngineEventOf } from "../events.js";
import type { Answer } from "../kit/answer.js";
import type { Turn } from "../kit/turn-runner.js";
import { addUsage, type ChatMessage, type Usage } from "../messages.js";
import type { TurnProblem } from "../problems.js";
import { offlineProblem } from "../providers/map-provider-problem.js";
import type { FinishReason } from "../providers/provider-adapter.js";
import type { TooLongRefusal } from "../providers/recognise-too-long.js";
import { storeAnswer } from "./chat-loading.js";
import type { ChatRuntime, LastCount } from "./chat-state.js";
import type { EngineParts } from "./engine-parts.js";
import type { TurnRequest } from "./request.js";
import type { Sizing } from "./sizing.js";

/** The idle limit of a turn's request when the host sets none (`turnIdleMs`). */
export const defaultTurnIdleMs = 300_000;

/** What a turn has spent and what its transcript keeps, as it goes. */
export interface TurnTally {
  usage: Usage;
  /** What the transcript keeps when the turn ends: the plan's kept messages, and the answer once in the log. */
  kept: readonly ChatMessage[];
  /** The transcript was written with the answer, as the turn ends (its usage and problem in it): not again. */
  savedWithAnswer?: boolean;
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
  const { answer, tally, size, rt } = attempt;
  let finish: FinishReason | null = null;
  let served = 0;
  // No content for the idle limit ends the request (keep-alive comments are no content: no part comes of them).
  const idleMs = attempt.parts.options.turnIdleMs ?? defaultTurnIdleMs;
  const idle = new AbortController();
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const content = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => idle.abort(new DOMException(`No content for ${idleMs} ms`, "TimeoutError")), idleMs);
  };
  const turnSignal = attempt.request.request.abortSignal;
  const request = {
    ...attempt.request.request,
    abortSignal: turnSignal ? AbortSignal.any([turnSignal, idle.signal]) : idle.signal,
  };
  try {
    content();
    for await (const part of attempt.parts.provider.streamChat(request)) {
      content();
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
          if (learnFromUsage(attempt, part.usage)) served += part.usage.inputTokens + part.usage.outputTokens;
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
    if (idle.signal.aborted && !turnSignal?.aborted) {
      const seconds = Math.round(idleMs / 1000);
      const provider = attempt.parts.provider.provider;
      return {
        type: "failed",
        problem: offlineProblem(`${provider} sent nothing for ${seconds} s; the turn was ended`),
      };
    }
    if (isAbortError(error) || !ProviderCallError.isInstance(error)) throw error;
    const refusal = error.tooLong;
    // A refusal after words have arrived is not retried: what was written stays.
    if (refusal === null || error.afterOutput || answer.started) return { type: "failed", problem: error.problem };
    return { type: "refused", refusal, error };
  } finally {
    clearTimeout(idleTimer);
  }
  sayWindowRaised(attempt, attempt.parts.windowEvidence.served(size.modelId, served));
  return { type: "answered", finish };
}

/**
 * Raises the chat's factor from a usage report, unless no real request could have produced it (more input
 * than the window allows, or a factor beyond any tokenizer's): that one is ignored, with a health note.
 * Returns whether the report was believed.
 */
function learnFromUsage(attempt: Attempt, usage: Usage): boolean {
  const { size, rt, request } = attempt;
  const implausible = implausibleUsage({
    inputTokens: usage.inputTokens,
    estimatedRequestTokens: request.estimatedTokens,
    window: size.budget.window,
  });
  if (implausible === null) {
    rt.lastCount = countOf(attempt, usage);
    rt.factor = learnFactors(rt.factor, {
      modelId: size.modelId,
      inputTokens: usage.inputTokens,
      estimatedRequestTokens: request.estimatedTokens,
      window: size.budget.window,
      budget: size.budget.budget,
    });
    return true;
  }
  const why =
    implausible === "over-window"
      ? `more than its ${size.budget.window}-token window allows`
      : `over ${Math.floor(usage.inputTokens / request.estimatedTokens)} times the estimate`;
  const note = attempt.parts.addNote(
    rt,
    "usage-ignored",
    `${size.info.displayName} reported ${usage.inputTokens} input tokens for this request, ${why}; the report was ignored for sizing.`,
  );
  attempt.turn.send({ type: "health-note", chatId: rt.chatId, note });
  return false;
}

/**
 * The request and its answer as the provider counted them, when that count is at least the request's estimate and
 * the provider counts what it read from its cache (Ollama does not): else estimate × factor stands (a lower count
 * is no full count, or the estimate errs high, as on BPE).
 */
function countOf(attempt: Attempt, usage: Usage): LastCount | null {
  const { size, rt, request, answer } = attempt;
  if (attempt.parts.provider.inputTokensCountCache === false) return null;
  if (usage.inputTokens < request.estimatedTokens) return null;
  return {
    modelId: size.modelId,
    seqs: [...request.request.messages.map((message) => message.seq), answer.seq],
    summary: rt.summary?.text ?? null,
    tokens: usage.inputTokens + usage.outputTokens,
  };
}

function sayWindowRaised(attempt: Attempt, raised: number | undefined): void {
  if (raised === undefined) return;
  const { rt, size } = attempt;
  const note = attempt.parts.addNote(
    rt,
    "window-learned",
    `${size.info.displayName} answered a request of ${raised} tokens, more than the window a refusal named; its window is taken to be at least that.`,
  );
  attempt.turn.send({ type: "health-note", chatId: rt.chatId, note });
}

/**
 * Puts what the answer holds in the log and says `message-end`. When the store writes turns whole, the transcript
 * goes with it as the turn ends (its usage added, and the `problem` it ends with, if any), so a turn writes it once.
 */
export async function keepAnswer(
  attempt: Pick<Attempt, "parts" | "rt" | "answer" | "tally" | "turn">,
  finishReason: EngineEventOf<"message-end">["finishReason"],
  problem: TurnProblem | null = null,
): Promise<void> {
  const { parts, rt, answer, tally } = attempt;
  const message = answer.message(parts.now(), finishReason);
  const kept = [...tally.kept, message];
  const ending = {
    usage: addUsage(rt.usage, tally.usage),
    problem: problem === null ? null : { seq: attempt.turn.input.seq, problem },
  };
  // The answer joins the active branch (its log, tree and leaf) as it is stored.
  tally.savedWithAnswer = await storeAnswer(parts, rt, message, kept, ending);
  tally.kept = kept;
  answer.end(message);
}
