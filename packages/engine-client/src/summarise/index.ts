export { splitIntoPieces, toolArgumentsShownChars, toPlainLines } from "./plain-lines.js";
export { redactedMarker, redactedSecretKinds, redactSecrets } from "./redact.js";
