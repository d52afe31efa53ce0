import { type Engine, hasBranches, parseCompactCommand } from "../engine.js";
import { NacreChatRefusedError } from "../errors.js";
import { nextSeq } from "../kit/turn-open.js";
import type { PicturePart, ToolResultPart } from "../messages.js";
import { nacreNextSeq } from "./chat-messages.js";
import { type NacreUIMessage, seqOfAnswerMessageId } from "./ui-message.js";

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
  /**
   * Answers the person's message at `seq` again: while it is the log's last message (after a problem), or, on an
   * engine with `branches`, any person's message of the active branch (a new answer beside the old one).
   */
  | { readonly kind: "retry"; readonly seq: number; readonly text: string }
  /**
   * `sendMessage({ text, messageId })`: a new version of the person's message after `parent` (-1: the first),
   * on an engine with `branches`; `seq` is the log's next once {@link placeOnLog} read it.
   */
  | {
      readonly kind: "edit";
      readonly seq: number;
      readonly parent: number;
      readonly text: string;
      readonly attachments: readonly PicturePart[];
    }
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
  // The page's messages are the active branch: the edited message follows the last place of the one before it.
  if (request.trigger === "submit-message" && request.messageId !== undefined && message.role === "user") {
    return { kind: "edit", seq, parent: seq - 1, text: textOf(message), attachments: picturesOf(message) };
  }
  if (request.trigger === "regenerate-message") {
    if (message.role !== "user") throw new NacreChatRefusedError("regenerate");
    // A message edited in this page has no seq of its own; the answer being replaced names it.
    const asked = message.metadata?.seq ?? seqOfAnswerMessageId(request.messageId) ?? seq;
    return { kind: "retry", seq: asked, text: textOf(message) };
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

/**
 * The plan against the log, before anything is written. A retry is honest while the person's message is the
 * active branch's last, or, on an engine with `branches`, any person's message of it (the old answer stays a
 * version); an edit needs `branches` (else it would cut the log) and goes at the log's next seq. Refuses with
 * `NacreChatRefusedError` what would lose a message.
 */
export async function placeOnLog<T extends NacreTurnPlan>(
  engine: Engine,
  chatId: string,
  plan: T,
  signal?: AbortSignal,
): Promise<T> {
  if (plan.kind !== "retry" && plan.kind !== "edit") return plan;
  if (plan.kind === "edit" && !hasBranches(engine)) throw new NacreChatRefusedError("edit");
  const chat = await engine.loadChat(chatId, signal ? { abortSignal: signal } : undefined);
  if (plan.kind === "edit") return { ...plan, seq: chat.nextSeq ?? nextSeq(chat.messages) };
  const last = chat.messages.at(-1);
  if (last?.role === "user" && last.seq === plan.seq) return plan;
  const asked = chat.messages.find((message) => message.seq === plan.seq);
  if (hasBranches(engine) && asked?.role === "user") return plan;
  throw new NacreChatRefusedError("regenerate");
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
