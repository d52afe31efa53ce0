export {
  answerRoomFor,
  answerRoomShare,
  type Budget,
  type BudgetInput,
  type BudgetRoom,
  computeBudget,
  leanShare,
  maximumAnswerRoom,
  minimumAnswerRoom,
  transcriptTokenCap,
  windowMargin,
  windowTakes,
} from "./budget.js";
export {
  allModelWeights,
  defaultTokenEstimator,
  estimateTokens,
  familyWeights,
  modelFamily,
  type PreTokenWeights,
  type TokenEstimator,
  type TokenFamily,
  tokenFamilies,
  utf8Length,
  weightsFor,
} from "./estimate.js";
export { factorForModel, initialFactor, type ModelFactor, raiseFactor } from "./factor.js";
export {
  type FoldInput,
  type FoldMode,
  type FoldPlan,
  type FoldState,
  initialFoldState,
  planFold,
  type TextLimit,
  transcriptByteLimit,
  transcriptMessageLimit,
} from "./fold.js";
export {
  buildRequestMessages,
  frameSummary,
  summaryFrameName,
  summaryFrameSeparator,
  unframeSummary,
} from "./frame.js";
export {
  createEstimateCache,
  type EstimateCache,
  type EstimateCacheOptions,
  estimateMessageBytes,
  estimateMessagesTokens,
  estimateMessageTokens,
  type MessageMeasure,
  messageOverheadTokens,
  pictureTokens,
  type ThinkingSentBack,
} from "./message-estimate.js";
export {
  isShortenablePart,
  leftOutMarker,
  minimumShortenedChars,
  type ShortenedCopy,
  type ShortenedText,
  type ShortenTurnInput,
  type ShortenTurnResult,
  shortenMessage,
  shortenText,
  shortenTurn,
} from "./shorten.js";
export { splitTurns, type TurnRange } from "./turns.js";
export {
  defaultApiWindow,
  defaultLocalWindow,
  isLocalServer,
  isLoopbackHost,
  localProviderKinds,
  type ResolvedWindow,
  resolveWindow,
  type WindowInput,
  type WindowSource,
} from "./window.js";
