import type { EngineEvent, EngineEventOf, EngineEventType, HealthNote, SummaryState } from "./events.js";
import type { BranchMessage, ModelInfo, PicturePart, ToolResultPart, Usage } from "./messages.js";
import type { TurnProblem } from "./problems.js";

export type Unsubscribe = () => void;

/** What the person sends, and where it sits. */
export interface TurnInput {
  readonly chatId: string;
  /** The person's message's place in the chat's log. The engine's own log must agree. */
  readonly seq: number;
  /**
   * The message the person's message follows (an edit names the parent of the message it replaces). Default:
   * the chat's active leaf. A `parent` that is not in the log is a `TurnSequenceError`, like a stale `seq`; an
   * engine without the `branches` capability accepts only its active leaf. Ignored with `retry`.
   */
  readonly parent?: number;
  readonly text: string;
  readonly attachments?: readonly PicturePart[];
  /**
   * Results of the tools the model called in this turn's previous round, handed back by the host.
   * When present, `text` is empty and the same turn continues.
   */
  readonly toolResults?: readonly ToolResultPart[];
  /**
   * Answers the person's message at `seq` again without adding it to the log (after a turn problem, say on
   * another model): it must be the person's and the active branch's last message; with the `branches`
   * capability, any person's message on the active branch, and the new answer starts a branch beside the old
   * one (regenerate). `text` is then ignored. Default false.
   */
  readonly retry?: boolean;
  /**
   * The text is the host's fixed prompt to go on with a reply that was cut off, not the person's own words: the
   * message is kept with `continuation: true` and never learned from. Default false.
   */
  readonly continuation?: boolean;
  /** Where this chat came from; routine runs and chats with other people are never learned from. */
  readonly origin?: "person" | "routine" | "group";
  /** Set when the chat read something untrusted (a web page, a file from elsewhere). */
  readonly untrusted?: boolean;
  readonly abortSignal?: AbortSignal;
  /**
   * An engine that folds ahead of the need after this turn begins no sooner than this settles: a server passes
   * the moment its `turn-end` has gone out, so that planning the fold never holds that back. Not sent over the
   * wire. Default: the turn's end.
   */
  readonly foldAheadAfter?: Promise<unknown>;
}

/** How much of the window the next request will use. */
export interface ContextUsage {
  /** Estimated tokens of the next request (system prompt, tools, summary, kept turns), × factor. */
  readonly usedTokens: number;
  /** The model's window in tokens. */
  readonly window: number;
  /** What the transcript may use before it folds. */
  readonly budget: number;
  /** The chat's correction of the estimate (≥ 1). */
  readonly factor: number;
  /** usedTokens / window, from 0. */
  readonly share: number;
}

/** Options of {@link Engine.loadChat}. */
export interface LoadChatOptions {
  readonly abortSignal?: AbortSignal;
  /**
   * Only a page of the log: the newest `limit` messages before the seq `before` (default: the newest). An
   * engine that reads the log page by page says so with `hasOlder` in the snapshot; one that does not gives
   * every message, as without a page. Default: every message.
   */
  readonly page?: { readonly before?: number; readonly limit: number };
}

/** The chat as the UI shows it. */
export interface ChatSnapshot {
  readonly chatId: string;
  /**
   * Every message of the active branch (the path from the root to the active leaf; the whole log when it never
   * branched), folded ones too, in `seq` order; with a page asked for, that page (from the leaf back) when
   * `hasOlder` is present. A message with other versions carries `siblings`.
   */
  readonly messages: readonly BranchMessage[];
  /** The seq the next message takes (the log's length, every branch counted). Absent on engines that predate it. */
  readonly nextSeq?: number;
  /** The active branch's last message's seq (what a new turn follows); absent for an empty chat. */
  readonly activeLeaf?: number;
  /** Present when `messages` is the page asked for: whether the log holds older messages than its first. */
  readonly hasOlder?: boolean;
  /** The latest summary, or null when nothing is folded. */
  readonly summary: SummaryState | null;
  /** Newest first. */
  readonly healthNotes: readonly HealthNote[];
  /** The model the chat talks to. */
  readonly model: ModelInfo;
  /** Null when the engine cannot tell. */
  readonly contextUsage: ContextUsage | null;
  /** The problem of the last turn, until the next turn starts. */
  readonly problem: { readonly seq: number; readonly problem: TurnProblem } | null;
  /** Sum of all turns' usage. */
  readonly usage: Usage;
}

/** Options for a fold on request (`/compact [what to keep]`). */
export interface CompactOptions {
  /** What the summary should keep above all. */
  readonly keep?: string;
  readonly abortSignal?: AbortSignal;
}

const compactCommandPattern = /^\/compact(?:\s+([\s\S]*))?$/i;

/**
 * Reads `/compact [what to keep]` at the start of what the person typed (surrounding space ignored): the fold
 * on request it asks for, or null for anything else, which is a message to send. Nacre's composer and the AI
 * SDK adapters both read it here.
 */
export function parseCompactCommand(text: string): Pick<CompactOptions, "keep"> | null {
  const match = compactCommandPattern.exec(text.trim());
  if (!match) return null;
  const keep = match[1]?.trim();
  return keep ? { keep } : {};
}

/** What happened to a fold on request. */
export type CompactResult =
  | { readonly status: "compacted"; readonly summary: SummaryState }
  | { readonly status: "nothing-to-fold" }
  /** No model wrote a summary and the chat is under its budget: nothing was dropped. */
  | { readonly status: "no-summary" }
  | { readonly status: "handed-over" }
  | { readonly status: "aborted" };

/** The `context` capability: the engine keeps a transcript, fits it into the window and folds it. */
export interface ContextCapability {
  /** Folds all but the newest turn now. */
  compact(chatId: string, options?: CompactOptions): Promise<CompactResult>;
  /** How much of the window the next request will use. */
  usage(chatId: string): Promise<ContextUsage>;
  /**
   * Stops the chat's fold ahead of the need (one the engine began after a turn, in the background): it changes
   * nothing, and says `compaction-skipped`. False when none runs. Present on engines that fold ahead.
   */
  stopFoldAhead?(chatId: string): boolean;
  /**
   * Resolves once the engine has planned the fold ahead of the need after the chat's last turn (it plans it just
   * after the turn's `turn-end` went out): true when a fold ahead runs (its `compacting` has gone out), false when
   * none does. Present on engines that fold ahead.
   */
  foldAheadPlanned?(chatId: string): Promise<boolean>;
}

/** Options of {@link BranchCapability.selectBranch}. */
export interface SelectBranchOptions {
  readonly abortSignal?: AbortSignal;
  /** The page of the new branch to return, as in {@link LoadChatOptions.page}. Default: every message. */
  readonly page?: LoadChatOptions["page"];
}

/**
 * The `branches` capability: the chat's log is a tree (edits and regenerated answers are new versions beside
 * the old ones; nothing is cut), and the person may move between versions. Edit is a turn with `parent`,
 * regenerate a turn with `retry` on any person's message of the active branch.
 */
export interface BranchCapability {
  /**
   * Makes the branch through the message at `seq` active: its newest leaf (the highest seq below it) becomes
   * the active leaf, and the next turn continues it. Resolves with the chat's snapshot on that branch. An unknown
   * seq is a `TurnSequenceError`; a turn of the chat running, `ChatBusyError`.
   */
  selectBranch(chatId: string, seq: number, options?: SelectBranchOptions): Promise<ChatSnapshot>;
}

/**
 * What an engine can do. A capability is present exactly when the engine implements it; the UI reads
 * capabilities and never asks which engine it is.
 */
export interface EngineCapabilities {
  /** Present when the engine keeps the transcript, folds it and can compact on request. */
  readonly context?: ContextCapability;
  /** Present when the chat's log is a tree: edit, regenerate and moving between versions. */
  readonly branches?: BranchCapability;
}

/** A stream of one turn's events, started at once; `done` settles when the turn is over. */
export interface TurnStream extends AsyncIterable<EngineEvent> {
  readonly done: Promise<EngineEventOf<"turn-end">>;
}

export type EngineListener = (event: EngineEvent) => void;

/**
 * An engine: what a chat UI talks to. Turn events go both to the turn's stream and to `subscribe`
 * listeners; fold events of a `/compact` go to listeners only.
 */
export interface Engine {
  readonly specificationVersion: "v1";
  readonly id: string;
  readonly displayName: string;
  readonly capabilities: EngineCapabilities;
  /** The chat as it is now (a page of it, when asked and the engine can). An unknown chat id is an empty chat. */
  loadChat(chatId: string, options?: LoadChatOptions): Promise<ChatSnapshot>;
  /**
   * Adds the person's message at `input.seq` and answers it; returns the turn's stream at once and never throws.
   * A turn refused before it starts rejects `done` (and the stream's reader, after no event) with the reason,
   * on every engine alike: `ChatBusyError` while a turn of the chat runs, `TurnSequenceError` for a `seq` that
   * does not follow the chat's log (or a retry of anything but its last message, the person's),
   * `InvalidChatIdError` for an unsafe chat id. Nothing is written and no event goes out: a refusal is not a
   * turn, so it has no `turn-problem`. A problem with the answer (the provider offline, a chat too long even
   * healed) ends a started turn with `turn-problem` and `turn-end` (status `problem`), and `done` resolves.
   */
  sendTurn(input: TurnInput): TurnStream;
  /** Every event of every chat, for as long as the listener is subscribed. */
  subscribe(listener: EngineListener): Unsubscribe;
}

/** Whether an engine declares the `context` capability. */
export function hasContext(engine: Engine): engine is Engine & { capabilities: { context: ContextCapability } } {
  return engine.capabilities.context !== undefined;
}

/** Whether an engine declares the `branches` capability. */
export function hasBranches(engine: Engine): engine is Engine & { capabilities: { branches: BranchCapability } } {
  return engine.capabilities.branches !== undefined;
}

/** Subscribes to one event type. */
export function onEngineEvent<T extends EngineEventType>(
  engine: Pick<Engine, "subscribe">,
  type: T,
  listener: (event: EngineEventOf<T>) => void,
): Unsubscribe {
  return engine.subscribe((event) => {
    if (event.type === type) listener(event as EngineEventOf<T>);
  });
}
