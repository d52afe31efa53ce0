export {
  TurnProblemAction as Action,
  TurnProblemCounts as Counts,
  TurnProblemDescription as Description,
  TurnProblemDetails as Details,
  TurnProblemRoot as Root,
  TurnProblemSendAgain as SendAgain,
  TurnProblemTitle as Title,
} from "../turn-problem.js";
