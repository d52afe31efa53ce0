/**
 * The chat's log: every message the person, the model and the tools wrote, each at its place (`seq`).
 * A log only grows; folding changes what is *sent*, never what is *kept*.
 */

/** A piece of a message. Parts are kept exactly as the provider gave them (thinking signatures included). */
export type MessagePart = TextPart | ThinkingPart | ToolCallPart | ToolResultPart | PicturePart;

export interface TextPart {
  readonly type: "text";
  readonly text: string;
}

/** The model's reasoning. Sent back only where the provider asks for it; never shown to a summariser. */
export interface ThinkingPart {
  readonly type: "thinking";
  readonly text: string;
  /** Provider signature that must travel back byte for byte (Anthropic). */
  readonly signature?: string;
  /** Encrypted reasoning the person never sees (Anthropic `redacted_thinking`). */
  readonly redacted?: boolean;
}

export interface ToolCallPart {
  readonly type: "tool-call";
  readonly id: string;
  readonly name: string;
  /** Arguments as the JSON text the model wrote. */
  readonly arguments: string;
}

export interface ToolResultPart {
  readonly type: "tool-result";
  /** The `id` of the tool call this answers. */
  readonly callId: string;
  readonly name?: string;
  readonly text: string;
  readonly isError?: boolean;
}

export interface PicturePart {
  readonly type: "picture";
  /** A name to show and to give a summariser (`[picture: name]`). */
  readonly name: string;
  readonly mediaType: string;
  /** Base64 bytes, when the provider receives the bytes (they count 1,600 tokens). */
  readonly data?: string;
  /** A link, when the provider fetches the picture itself. */
  readonly url?: string;
}

export type MessageRole = "user" | "assistant" | "tool";

/**
 * How an assistant message ended: `stop` (finished), `length` (cut off at the output limit or the window),
 * `tool-calls` (it called tools), `aborted` (the person stopped it), `error` (a problem ended the turn).
 */
export type MessageFinishReason = "stop" | "length" | "tool-calls" | "aborted" | "error";

export interface ChatMessage {
  /** The message's place in the chat's log, from 0, never reused. */
  readonly seq: number;
  readonly role: MessageRole;
  readonly parts: readonly MessagePart[];
  /** The model that wrote an assistant message. */
  readonly model?: string;
  /** Milliseconds since the epoch. */
  readonly createdAt?: number;
  /** An assistant message: how it ended. Absent in logs written before it was kept (then read as finished). */
  readonly finishReason?: MessageFinishReason;
  /**
   * A person's message the host sent to go on with a cut-off reply (a fixed prompt, not the person's own words):
   * never learned from.
   */
  readonly continuation?: boolean;
  /**
   * The seq of the message this one follows on its branch: absent means `seq - 1` (every message of a log
   * written before branches, and every message that continues the branch it was written on). An edit of the
   * person's message at s is a new message whose parent is s's parent; a regenerated answer's parent is the
   * person's message it answers again. Always below `seq`.
   */
  readonly parent?: number;
}

/**
 * A message of a branch as a snapshot shows it: with `siblings` when other versions of it exist (the seqs of
 * every message with the same parent and the same role, in seq order, itself included), so a picker can show
 * "2 / 3" and select another.
 */
export interface BranchMessage extends ChatMessage {
  readonly siblings?: readonly number[];
}

/** Token counts of one request (or the sum of several), as the provider reported them. */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Input tokens the provider read from its prompt cache. */
  readonly cachedInputTokens: number;
}

export const emptyUsage: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 });

/** Adds two usages; summarising is counted in the turn's usage this way. */
export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  return {
    inputTokens: a.inputTokens + (b.inputTokens ?? 0),
    outputTokens: a.outputTokens + (b.outputTokens ?? 0),
    cachedInputTokens: a.cachedInputTokens + (b.cachedInputTokens ?? 0),
  };
}

/** What a provider's model list says of one model. */
export interface ModelInfo {
  readonly id: string;
  readonly displayName: string;
  /** The window in tokens, when the provider says it (for a local server: the window it runs with). */
  readonly context?: number;
  /** Whether the model can answer now (loaded, enabled, not deprecated). */
  readonly ready: boolean;
  /** Whether it runs on this computer. */
  readonly local: boolean;
  /** The provider id (`openai`, `anthropic`, `ollama`, ...). */
  readonly provider?: string;
}

/** The plain text of a message's text parts, joined. */
export function messageText(message: Pick<ChatMessage, "parts">): string {
  let text = "";
  for (const part of message.parts) {
    if (part.type === "text") text += text ? `\n${part.text}` : part.text;
  }
  return text;
}

/** A message with one text part. */
export function textMessage(seq: number, role: MessageRole, text: string, extra?: Partial<ChatMessage>): ChatMessage {
  return { seq, role, parts: [{ type: "text", text }], ...extra };
}
