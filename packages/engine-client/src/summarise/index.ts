export { splitIntoPieces, toolArgumentsShownChars, toPlainLines } from "./plain-lines.js";
export { redactedMarker, redactedSecretKinds, redactSecrets } from "./redact.js";
export {
  buildSummaryPrompt,
  judgeSummaryReply,
  type SummariseOptions,
  type SummariseResult,
  type SummaryAttempt,
  type SummaryRejection,
  summariseFolded,
  summariserModels,
  summaryLimitTokens,
  summaryMaxTokens,
  summaryPieceChars,
} from "./summariser.js";
