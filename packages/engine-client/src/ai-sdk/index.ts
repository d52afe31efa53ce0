// @conch/engine-client/ai-sdk: the Vercel AI SDK's `useChat` on a Nacre engine (peer: `ai` ^6 || ^7).

export { type NacreChatRefusalReason, NacreChatRefusedError } from "../errors.js";
export { nacreChatMessages, nacreDivider, nacreNextSeq } from "./chat-messages.js";
export {
  createTurnChunkMapper,
  type NacreUIMessageChunk,
  type TurnChunkMapper,
  type TurnChunkMapperOptions,
  turnToUIMessageStream,
} from "./map-turn.js";
export { type NacreChatRequestBody, nacreChatFetch, nacreSendMessagesRequest } from "./request-body.js";
export {
  createNacreChatRoute,
  type NacreChatResponseOptions,
  type NacreChatRouteOptions,
  type NacreRunningTurns,
  nacreChatResponse,
} from "./route.js";
export { createNacreTransport } from "./transport.js";
export {
  answerMessageId,
  type NacreDataTypes,
  type NacreFoldData,
  type NacreMessageMetadata,
  type NacreProblemData,
  type NacreUIMessage,
  userMessageId,
} from "./ui-message.js";
