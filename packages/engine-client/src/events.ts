import type { ContextUsage } from "./engine.js";
import type { ChatMessage, MessageFinishReason, Usage } from "./messages.js";
import type { TurnProblem } from "./problems.js";

/** Why a fold happened. */
export type CompactionReason = "budget" | "messages" | "bytes" | "manual" | "too-long";

/** Size of what is sent, in messages and estimated tokens. */
export interface TranscriptSize {
  readonly messages: number;
  readonly tokens: number;
}

/** The latest summary and where the model's word-for-word memory starts. */
export interface SummaryState {
  /** The summary text, exactly as the engine sends it (inside the frame). Empty when no model wrote one. */
  readonly text: string;
  /** The model that wrote it; null when the turns were dropped without a summary. */
  readonly model: string | null;
  /** That model's display name, when the engine knows it. */
  readonly modelName?: string;
  /** The log position of the first kept message: everything before it is folded. */
  readonly firstKeptSeq: number;
  readonly reason: CompactionReason;
  readonly before: TranscriptSize;
  readonly after: TranscriptSize;
  /** Everything folded so far, over all folds of the chat: messages and estimated tokens (absent in older files). */
  readonly folded?: TranscriptSize;
  /** Milliseconds since the epoch. */
  readonly at: number;
}

/** A quiet thing the person may want to know about later (Settings → Health). */
export interface HealthNote {
  readonly id: string;
  readonly chatId: string;
  /**
   * `healed`: a refusal was retried quietly; `summary-failed`: no model wrote a summary; `summary-shortened`: a fold's
   * texts were too long to read whole, so the summary was written from their heads and tails; `window-learned`: a
   * model's window was learned; `usage-ignored`: a usage report no real request could give was left out of sizing;
   * `log-repaired`: the chat's log was repaired on load (a copy kept aside).
   */
  readonly kind:
    | "healed"
    | "summary-failed"
    | "summary-shortened"
    | "window-learned"
    | "usage-ignored"
    | "log-repaired";
  readonly text: string;
  /** Milliseconds since the epoch. */
  readonly at: number;
  readonly provider?: string;
  readonly model?: string;
}

interface ChatEventBase {
  readonly chatId: string;
}

/** The person's message was added to the log and the engine started on it. */
export interface TurnStartEvent extends ChatEventBase {
  readonly type: "turn-start";
  readonly message: ChatMessage;
}
/** A new assistant message starts; deltas for `seq` follow. */
export interface MessageStartEvent extends ChatEventBase {
  readonly type: "message-start";
  readonly seq: number;
  readonly role: "assistant";
  readonly model?: string;
}
export interface TextDeltaEvent extends ChatEventBase {
  readonly type: "text-delta";
  readonly seq: number;
  readonly delta: string;
}
export interface ThinkingDeltaEvent extends ChatEventBase {
  readonly type: "thinking-delta";
  readonly seq: number;
  readonly delta: string;
}
export interface ToolCallEvent extends ChatEventBase {
  readonly type: "tool-call";
  readonly seq: number;
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}
/** A message is complete and is now in the log as given. */
export interface MessageEndEvent extends ChatEventBase {
  readonly type: "message-end";
  readonly message: ChatMessage;
  /** How the message ended; the message carries it too (`message.finishReason`), so that the log keeps it. */
  readonly finishReason: MessageFinishReason;
}
export interface UsageEvent extends ChatEventBase {
  readonly type: "usage";
  /** This turn's usage so far, summarising included. */
  readonly usage: Usage;
}
/**
 * A fold began (before the summariser's first request), or went on: then `piece` of `pieces` says how many of
 * the summariser's pieces are read so far, so a divider can show the fold's progress.
 */
export interface CompactingEvent extends ChatEventBase {
  readonly type: "compacting";
  readonly reason: CompactionReason;
  /**
   * Where the fold will cut: the `seq` of the first message it keeps (the `firstKeptSeq` its summary will have when
   * it folds as planned), so that "Summarising…" stands where the divider will. Absent from older servers.
   */
  readonly firstKeptSeq?: number;
  /** How many pieces the summariser has read, from 1; absent on the event that opens the fold. */
  readonly piece?: number;
  /** How many pieces this fold reads (the summariser's requests, unless a model fails and the next starts again). */
  readonly pieces?: number;
}
export interface CompactedEvent extends ChatEventBase, SummaryState {
  readonly type: "compacted";
}
/**
 * A fold was started but ended without changing what is sent (aborted, nothing to fold, or a fold on request that
 * no model summarised while the chat is under its budget).
 */
export interface CompactionSkippedEvent extends ChatEventBase {
  readonly type: "compaction-skipped";
  readonly reason: CompactionReason;
  readonly why: "aborted" | "nothing-to-fold" | "handed-over" | "no-summary";
}
/** A "too long" refusal was healed by a quiet retry. */
export interface HealedEvent extends ChatEventBase {
  readonly type: "healed";
  readonly seq: number;
  readonly provider: string;
  readonly model: string;
  /** The window the refusal named, when it named one. */
  readonly window?: number;
}
export interface HealthNoteEvent extends ChatEventBase {
  readonly type: "health-note";
  readonly note: HealthNote;
}
export interface TurnProblemEvent extends ChatEventBase {
  readonly type: "turn-problem";
  /** The person's message the problem belongs to. */
  readonly seq: number;
  readonly problem: TurnProblem;
}
/** The turn is over. */
export interface TurnEndEvent extends ChatEventBase {
  readonly type: "turn-end";
  readonly seq: number;
  readonly status: "done" | "aborted" | "problem" | "tool-calls";
  readonly usage: Usage;
  /**
   * How much of the window the next request will use, as the engine computed it at the turn's end (absent
   * when the engine cannot tell). A UI shows it instead of asking `context.usage` again.
   */
  readonly contextUsage?: ContextUsage;
}

/** Everything an engine says. Discriminated by `type`; switch over it exhaustively. */
export type EngineEvent =
  | TurnStartEvent
  | MessageStartEvent
  | TextDeltaEvent
  | ThinkingDeltaEvent
  | ToolCallEvent
  | MessageEndEvent
  | UsageEvent
  | CompactingEvent
  | CompactedEvent
  | CompactionSkippedEvent
  | HealedEvent
  | HealthNoteEvent
  | TurnProblemEvent
  | TurnEndEvent;

export type EngineEventType = EngineEvent["type"];
export type EngineEventOf<T extends EngineEventType> = Extract<EngineEvent, { type: T }>;
