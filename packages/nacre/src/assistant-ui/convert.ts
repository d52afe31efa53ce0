import type { ThreadMessageLike } from "@assistant-ui/react";
import type {
  ChatMessage,
  MessagePart,
  StreamingMessageState,
  ToolCallPart,
  ToolResultPart,
} from "@conch/engine-client";

/** What a thread message carries of the log, in `metadata.custom`. */
export interface NacreMessageCustom {
  /** The message's place in the engine's log. */
  readonly nacreSeq: number;
  /** Whether the message is before the divider (the summary stands for it; the model no longer reads it word for word). */
  readonly nacreFolded: boolean;
  /**
   * Present while the person has chosen another version of this message in the BranchPicker and the engine has
   * not answered yet: that version's seq. The thread keeps showing this one until the chosen one has arrived, so
   * no version ever shows blank; the picker can show itself busy by it (`aria-busy`).
   */
  readonly nacreSwitchingTo?: number;
}

/** The thread message id of a log seq: stable across reloads and tabs, since a seq is never reused. */
export function threadMessageId(seq: number): string {
  return `nacre-${seq}`;
}

/** The log seq of a thread message id made by {@link threadMessageId}, else null. */
export function seqOfThreadMessageId(id: string): number | null {
  const match = /^nacre-(\d+)$/.exec(id);
  return match ? Number(match[1]) : null;
}

type ThreadPart = Exclude<ThreadMessageLike["content"], string>[number];
type MessageStatus = NonNullable<ThreadMessageLike["status"]>;

function toolCallPart(call: ToolCallPart, result: ToolResultPart | undefined): ThreadPart {
  return {
    type: "tool-call",
    toolCallId: call.id,
    toolName: call.name,
    argsText: call.arguments,
    ...(result ? { result: result.text, isError: result.isError === true } : {}),
  };
}

function pictureSource(part: Extract<MessagePart, { type: "picture" }>): string | null {
  if (part.url) return part.url;
  if (part.data) return `data:${part.mediaType};base64,${part.data}`;
  return null;
}

function contentOf(parts: readonly MessagePart[], results: ReadonlyMap<string, ToolResultPart>): ThreadPart[] {
  const content: ThreadPart[] = [];
  for (const part of parts) {
    switch (part.type) {
      case "text":
        content.push({ type: "text", text: part.text });
        break;
      case "thinking":
        // Encrypted reasoning has nothing for the person to read.
        if (!part.redacted && part.text) content.push({ type: "reasoning", text: part.text });
        break;
      case "tool-call":
        content.push(toolCallPart(part, results.get(part.id)));
        break;
      case "tool-result":
        // Shown on the call it answers (assistant-ui keeps a result on its tool-call part).
        break;
      case "picture": {
        const image = pictureSource(part);
        content.push(image ? { type: "image", image, filename: part.name } : { type: "text", text: `[${part.name}]` });
        break;
      }
      default:
        part satisfies never;
    }
  }
  return content;
}

/** How a kept reply ended, in assistant-ui's words: cut off (`length`) and stopped (`cancelled`) are incomplete. */
function endedStatus(message: ChatMessage): MessageStatus {
  switch (message.finishReason) {
    case "length":
      return { type: "incomplete", reason: "length" };
    case "aborted":
      return { type: "incomplete", reason: "cancelled" };
    case "error":
      return { type: "incomplete", reason: "error" };
    default:
      return { type: "complete", reason: "stop" };
  }
}

/**
 * The log as assistant-ui's thread messages: one per person's and model's message, with its seq in the id
 * and in `metadata.custom`, a reply cut off or stopped `incomplete` (`length`, `cancelled`); a `tool` message is shown as the results on the calls it answers; the message
 * being written, when the log does not have it yet, comes last, running.
 */
export function toThreadMessages(
  messages: readonly ChatMessage[],
  options: { readonly firstKeptSeq: number | null; readonly streaming: StreamingMessageState | null },
): ThreadMessageLike[] {
  const results = new Map<string, ToolResultPart>();
  for (const message of messages) {
    if (message.role !== "tool") continue;
    for (const part of message.parts) if (part.type === "tool-result") results.set(part.callId, part);
  }
  const thread: ThreadMessageLike[] = [];
  const last = messages.at(-1);
  for (const message of messages) {
    if (message.role === "tool") continue;
    const custom: NacreMessageCustom = {
      nacreSeq: message.seq,
      nacreFolded: options.firstKeptSeq !== null && message.seq < options.firstKeptSeq,
    };
    const content = contentOf(message.parts, results);
    const waitsForTools =
      message === last && message.parts.some((part) => part.type === "tool-call" && !results.has(part.id));
    thread.push({
      id: threadMessageId(message.seq),
      role: message.role,
      content,
      ...(message.createdAt !== undefined ? { createdAt: new Date(message.createdAt) } : {}),
      ...(message.role === "assistant"
        ? {
            status: waitsForTools ? { type: "requires-action", reason: "tool-calls" } : endedStatus(message),
          }
        : {}),
      metadata: { custom: { ...custom } },
    });
  }
  const streaming = options.streaming;
  if (streaming && !messages.some((message) => message.seq === streaming.seq)) {
    const content: ThreadPart[] = [];
    if (streaming.thinking) content.push({ type: "reasoning", text: streaming.thinking });
    if (streaming.text) content.push({ type: "text", text: streaming.text });
    for (const call of streaming.toolCalls) content.push(toolCallPart(call, undefined));
    const custom: NacreMessageCustom = { nacreSeq: streaming.seq, nacreFolded: false };
    thread.push({
      id: threadMessageId(streaming.seq),
      role: "assistant",
      content,
      status: streaming.done ? { type: "complete", reason: "stop" } : { type: "running" },
      metadata: { custom: { ...custom } },
    });
  }
  return thread;
}

/** A thread message's place in assistant-ui's tree: the message before it on its branch, or null for the first. */
export interface BranchableThreadMessage {
  readonly message: ThreadMessageLike;
  readonly parentId: string | null;
}

/**
 * The active branch's thread messages as assistant-ui's tree, every other version of each beside it (same
 * parent, in seq order, so its BranchPicker counts ‹ n / m › as the engine does). The engine gives the other
 * versions' seqs, not their words: each stands as an empty message, never shown: when one is chosen, the
 * runtime keeps the shown version (marked `nacreSwitchingTo`) until the engine has made the chosen branch active
 * and the thread has read it back.
 */
export function toBranchableThreadMessages(
  thread: readonly ThreadMessageLike[],
  siblingsOf: (seq: number, parentId: string | null) => readonly number[] | undefined,
): BranchableThreadMessage[] {
  const items: BranchableThreadMessage[] = [];
  let parentId: string | null = null;
  for (const message of thread) {
    const seq = message.id === undefined ? null : seqOfThreadMessageId(message.id);
    const siblings = seq === null ? undefined : siblingsOf(seq, parentId);
    const versions = seq === null ? [] : siblings?.includes(seq) ? siblings : [...(siblings ?? []), seq];
    if (seq === null) items.push({ message, parentId });
    for (const sibling of versions) {
      if (sibling === seq) {
        items.push({ message, parentId });
        continue;
      }
      const custom: NacreMessageCustom = { nacreSeq: sibling, nacreFolded: false };
      items.push({
        message: {
          id: threadMessageId(sibling),
          role: message.role,
          content: [],
          ...(message.role === "assistant" ? { status: { type: "complete", reason: "unknown" } } : {}),
          metadata: { custom: { ...custom } },
        },
        parentId,
      });
    }
    parentId = message.id ?? null;
  }
  return items;
}
