import type { ContextUsage } from "../engine.js";
import { defaultErrorHandler, type ErrorHandler } from "../errors.js";
import type { EngineEventOf } from "../events.js";
import { addUsage, type ChatMessage, type Usage } from "../messages.js";
import type { TurnProblem } from "../problems.js";
import type { Turn } from "./turn-runner.js";

/** What every engine keeps of a chat across turns: the standing problem and the sum of usage. */
export interface TurnBook {
  problem: { readonly seq: number; readonly problem: TurnProblem } | null;
  usage: Usage;
}

/** A standing problem after a fold: a fold answers "too long", so that card no longer stands; others do. */
export function problemAfterFold(problem: TurnBook["problem"]): TurnBook["problem"] {
  return problem?.problem.kind === "too-long" ? null : problem;
}

/** The turn's opening is in the log: the last turn's problem no longer stands. */
export function startTurn(turn: Turn, book: TurnBook, message: ChatMessage): void {
  book.problem = null;
  turn.send({ type: "turn-start", chatId: turn.chatId, message });
}

/** What an engine does as a turn ends, before `turn-end` goes out. */
export interface TurnEndOptions {
  /** Saves the chat; a failure is reported, never the turn's. Default: nothing to save. */
  readonly save?: () => Promise<void>;
  /** How much of the window the next request will use, computed once here and carried by `turn-end`. */
  readonly contextUsage?: () => Promise<ContextUsage | null> | ContextUsage | null;
  /** Told when the save or the context usage fails (the turn still ends). Default: `defaultErrorHandler`, which logs it. */
  readonly onError?: ErrorHandler;
}

/** Ends a turn: adds its usage to the chat's, saves, and sends `turn-end` (with the context usage when known). */
export async function endTurn(
  turn: Turn,
  book: TurnBook,
  status: EngineEventOf<"turn-end">["status"],
  usage: Usage,
  options: TurnEndOptions = {},
): Promise<EngineEventOf<"turn-end">> {
  book.usage = addUsage(book.usage, usage);
  const onError = options.onError ?? defaultErrorHandler;
  try {
    await options.save?.();
  } catch (error) {
    // The log already has every message; a transcript that could not be written is rebuilt from it.
    onError(error, { during: "save", chatId: turn.chatId });
  }
  let contextUsage: ContextUsage | null = null;
  try {
    contextUsage = (await options.contextUsage?.()) ?? null;
  } catch (error) {
    onError(error, { during: "context-usage", chatId: turn.chatId });
  }
  const event: EngineEventOf<"turn-end"> = {
    type: "turn-end",
    chatId: turn.chatId,
    seq: turn.input.seq,
    status,
    usage,
    ...(contextUsage ? { contextUsage } : {}),
  };
  turn.send(event);
  return event;
}

/** Ends a turn with a problem: it stands (in snapshots) until the next turn starts. */
export function failTurn(
  turn: Turn,
  book: TurnBook,
  problem: TurnProblem,
  usage: Usage,
  options: TurnEndOptions = {},
): Promise<EngineEventOf<"turn-end">> {
  book.problem = { seq: turn.input.seq, problem };
  turn.send({ type: "turn-problem", chatId: turn.chatId, seq: turn.input.seq, problem });
  return endTurn(turn, book, "problem", usage, options);
}
