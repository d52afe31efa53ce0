import type { PrepareSendMessagesRequest } from "ai";
import { nacreTurnRequest } from "./plan-turn.js";
import type { NacreUIMessage } from "./ui-message.js";

/** What the page sends the route: the chat, the last message and the seq it expects (never the whole chat). */
export interface NacreChatRequestBody {
  readonly id: string;
  readonly trigger: "submit-message" | "regenerate-message";
  readonly messageId?: string;
  readonly message: NacreUIMessage;
  readonly seq: number;
}

/**
 * For `new DefaultChatTransport({ api, prepareSendMessagesRequest: nacreSendMessagesRequest })`: sends only the
 * last message and the seq the page expects, so that a stale tab gets a 409 and nothing is written.
 */
export const nacreSendMessagesRequest: PrepareSendMessagesRequest<NacreUIMessage> = ({
  id,
  messages,
  trigger,
  messageId,
  body,
}) => {
  const request = nacreTurnRequest({ trigger, messageId, messages });
  const sent: NacreChatRequestBody = {
    ...body,
    id,
    trigger,
    ...(messageId !== undefined ? { messageId } : {}),
    message: request.message,
    seq: request.seq,
  };
  return { body: sent };
};
