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

/** A request `useChat` (or the page) makes to the route: the chat's stop address, and whether it reads a turn. */
function routeRequestOf(
  input: RequestInfo | URL,
  init: RequestInit | undefined,
): { readonly stopAddress: string; readonly readsTurn: boolean } | null {
  const address = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const [path = "", query = ""] = address.split("?");
  const resumed = /^(.*)\/([^/]+)\/stream$/.exec(path);
  if (resumed) return { stopAddress: `${resumed[1]}/${resumed[2]}/stop`, readsTurn: true };
  const loaded = new URLSearchParams(query).get("id");
  if (loaded !== null) return { stopAddress: `${path}/${encodeURIComponent(loaded)}/stop`, readsTurn: false };
  if (init?.method !== "POST" || typeof init.body !== "string") return null;
  try {
    const body = JSON.parse(init.body) as { id?: unknown };
    if (typeof body.id !== "string") return null;
    return { stopAddress: `${path}/${encodeURIComponent(body.id)}/stop`, readsTurn: true };
  } catch {
    return null;
  }
}

/** Stops asked for and not yet answered, by stop address. */
const pendingStops = new Map<string, Promise<void>>();

/**
 * For `new DefaultChatTransport({ fetch: nacreChatFetch, … })` (and the page's own `GET {api}?id=`):
 * `createNacreChatRoute` keeps a turn running when its request closes, so that a reload resumes it; `useChat`'s
 * stop aborts the request, so this turns that abort into the explicit `POST {api}/{chatId}/stop`. The next
 * request for the chat waits for the stop's answer, which comes once the turn has ended: it reads the log the
 * stop left. A page that goes away aborts nothing, and its turn runs on.
 */
export const nacreChatFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const request = routeRequestOf(input, init);
  if (request === null) return fetch(input, init);
  const { stopAddress } = request;
  await pendingStops.get(stopAddress);
  const signal = init?.signal;
  if (signal && request.readsTurn) {
    signal.addEventListener(
      "abort",
      () => {
        const stop = fetch(stopAddress, {
          method: "POST",
          keepalive: true,
          ...(init?.headers !== undefined ? { headers: init.headers } : {}),
          ...(init?.credentials !== undefined ? { credentials: init.credentials } : {}),
        }).then(
          (response) => void response.body?.cancel(),
          () => undefined,
        );
        pendingStops.set(stopAddress, stop);
        void stop.finally(() => {
          if (pendingStops.get(stopAddress) === stop) pendingStops.delete(stopAddress);
        });
      },
      { once: true },
    );
  }
  return fetch(input, init);
};
