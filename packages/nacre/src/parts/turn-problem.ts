export {
  TurnProblemAction as Action,
  TurnProblemDescription as Description,
  TurnProblemDetails as Details,
  TurnProblemRoot as Root,
  TurnProblemTitle as Title,
} from "../turn-problem.js";
