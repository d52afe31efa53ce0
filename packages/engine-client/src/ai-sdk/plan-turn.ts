import { type Engine, parseCompactCommand } from "../engine.js";
import { NacreChatRefusedError } from "../errors.js";
import type { PicturePart, ToolResultPart } from "../messages.js";
import { nacreNextSeq } from "./chat-messages.js";
import type { NacreUIMessage } from "./ui-message.js";

/** One turn for the engine, read from what `useChat` sends. */
export type NacreTurnPlan =
  | {
      readonly kind: "message";
      readonly seq: number;
      readonly text: string;
      readonly attachments: readonly PicturePart[];
      /** The host's prompt to go on with a cut-off answer: kept with `continuation`, never learned from. */
      readonly continuation: boolean;
    }
  | {
      readonly kind: "tool-results";
      readonly seq: number;
      /** The person's message the continued answer belongs to. */
      readonly answers: number;
      readonly toolResults: readonly ToolResultPart[];
    }
  /** Answers the person's message at `seq` again; honest only while it is the log's last message. */
  | { readonly kind: "retry"; readonly seq: number; readonly text: string }
  /** `/compact [what to keep]`: the engine's fold on request, never a message to the model; `seq` is the log's next. */
  | { readonly kind: "compact"; readonly seq: number; readonly keep?: string };

/** What the transport and the route read of a `useChat` request. */
export interface NacreTurnRequest {
  readonly trigger: "submit-message" | "regenerate-message";
  /** Set by `sendMessage({ messageId })` (an edit) and by `regenerate`. */
  readonly messageId?: string | undefined;
  /** The last message, after `useChat` applied the trigger. */
  readonly message: NacreUIMessage;
  /** The seq the next message goes at, as the page knows the log. */
  readonly seq: number;
}

/** The plan for a request, or a refusal. Pure: the retry's honesty is checked against the log by {@link checkRetry}. */
export function planNacreTurn(request: NacreTurnRequest): NacreTurnPlan {
  const { message, seq } = request;
  // `sendMessage({ messageId })` replaces a person's message; an automatic send after tool results names the answer.
  if (request.trigger === "submit-message" && request.messageId !== undefined && message.role === "user") {
    throw new NacreChatRefusedError("edit");
  }
  if (request.trigger === "regenerate-message") {
    if (message.role !== "user") throw new NacreChatRefusedError("regenerate");
    return { kind: "retry", seq: message.metadata?.seq ?? seq, text: textOf(message) };
  }
  if (message.role === "user") {
    const text = textOf(message);
    const attachments = picturesOf(message);
    const command = attachments.length === 0 ? parseCompactCommand(text) : null;
    if (command) return { kind: "compact", seq, ...command };
    return { kind: "message", seq, text, attachments, continuation: message.metadata?.continuation === true };
  }
  if (message.role === "assistant" && message.metadata) {
    const toolResults = newToolResults(message);
    if (toolResults.length > 0) return { kind: "tool-results", seq, answers: message.metadata.seq, toolResults };
  }
  throw new NacreChatRefusedError("nothing-to-send");
}

/** The request `useChat`'s messages make (for the transport in the page, and for the body the route gets). */
export function nacreTurnRequest(options: {
  readonly trigger: "submit-message" | "regenerate-message";
  readonly messageId?: string | undefined;
  readonly messages: readonly NacreUIMessage[];
}): NacreTurnRequest {
  const message = options.messages.at(-1);
  if (!message) throw new NacreChatRefusedError("nothing-to-send");
  return {
    trigger: options.trigger,
    messageId: options.messageId,
    message,
    seq: nacreNextSeq(options.messages.slice(0, -1).concat(message.role === "assistant" ? [message] : [])),
  };
}

/** A retry is honest only while the person's message is the log's last: otherwise it would hide an answer. */
export async function checkRetry(engine: Engine, chatId: string, seq: number, signal?: AbortSignal): Promise<void> {
  const chat = await engine.loadChat(chatId, signal ? { abortSignal: signal } : undefined);
  const last = chat.messages.at(-1);
  if (last?.role !== "user" || last.seq !== seq) throw new NacreChatRefusedError("regenerate");
}

function textOf(message: NacreUIMessage): string {
  return message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

function picturesOf(message: NacreUIMessage): PicturePart[] {
  const pictures: PicturePart[] = [];
  for (const part of message.parts) {
    if (part.type !== "file" || !part.mediaType.startsWith("image/")) continue;
    const name = part.filename ?? "picture";
    const inline = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
    pictures.push(
      inline?.[2] !== undefined
        ? { type: "picture", name, mediaType: part.mediaType, data: inline[2] }
        : { type: "picture", name, mediaType: part.mediaType, url: part.url },
    );
  }
  return pictures;
}

/** The results `addToolOutput` gave to the calls of the answer's last round (earlier rounds' are in the log). */
function newToolResults(message: NacreUIMessage): ToolResultPart[] {
  const lastStep = message.parts.findLastIndex((part) => part.type === "step-start");
  const results: ToolResultPart[] = [];
  for (const part of message.parts.slice(lastStep + 1)) {
    if (!(part.type.startsWith("tool-") || part.type === "dynamic-tool") || !("toolCallId" in part)) continue;
    const name = part.type === "dynamic-tool" && "toolName" in part ? String(part.toolName) : part.type.slice(5);
    if (part.state === "output-available") {
      const output = part.output;
      results.push({
        type: "tool-result",
        callId: part.toolCallId,
        name,
        text: typeof output === "string" ? output : JSON.stringify(output ?? null),
      });
    } else if (part.state === "output-error") {
      results.push({ type: "tool-result", callId: part.toolCallId, name, text: part.errorText, isError: true });
    }
  }
  return results;
}
