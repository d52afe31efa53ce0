import {
  TurnProblemAction,
  TurnProblemCounts,
  TurnProblemDescription,
  TurnProblemDetails,
  TurnProblemRoot,
  TurnProblemSendAgain,
  TurnProblemTitle,
} from "../turn-problem.js";

/**
 * The parts by their short names (`TurnProblem.Root` = `TurnProblemRoot`): a plain object, which weighs less in
 * the core bundle than a module namespace.
 */
export const TurnProblem = {
  Action: TurnProblemAction,
  Counts: TurnProblemCounts,
  Description: TurnProblemDescription,
  Details: TurnProblemDetails,
  Root: TurnProblemRoot,
  SendAgain: TurnProblemSendAgain,
  Title: TurnProblemTitle,
} as const;
