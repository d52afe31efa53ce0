import type { ChatSnapshot, CompactResult, ContextUsage, Engine, TurnStream } from "../engine.js";
import {
  BranchCapabilityMissingError,
  ContextCapabilityMissingError,
  isAbortError,
  TurnSequenceError,
} from "../errors.js";
import type { CompactionReason, EngineEvent, EngineEventOf } from "../events.js";
import { parentOf } from "../kit/branch-tree.js";
import { reduceChat } from "../kit/reduce-chat.js";
import { nextSeq } from "../kit/turn-open.js";
import {
  type BranchMessage,
  type ChatMessage,
  messageText,
  type PicturePart,
  type ToolCallPart,
  type ToolResultPart,
} from "../messages.js";

/**
 * Where a {@link ConversationStore} keeps the chat's snapshot and context usage: a query cache (Nacre's is
 * TanStack Query's), so that prefetching, devtools and every reader of the chat share one copy.
 */
export interface ConversationCache {
  /** The cached snapshot, or undefined when the chat is not loaded. */
  peek(): ChatSnapshot | undefined;
  /** The cached snapshot, loading it first when there is none. */
  ensure(): Promise<ChatSnapshot>;
  /** Reads the chat from the engine again, whatever is cached. */
  refetch(): Promise<ChatSnapshot>;
  put(snapshot: ChatSnapshot): void;
  /**
   * An event came that the cache could not take: nothing is cached yet (a load under way may have missed it),
   * or events passed while nobody listened. Read the chat again once any load under way lands.
   */
  readAgain(): void;
  /** The context usage the engine delivered, in place of asking it again. */
  putUsage(usage: ContextUsage): void;
  /** The context usage may have changed and the engine did not say how: ask again. */
  invalidateUsage(): void;
}

/**
 * What the chat is doing now: `ready` for the next message, `submitted` (the turn started, no word yet),
 * `compacting` (a fold runs, in a turn or on request), `streaming` (a message is being written).
 */
export type ConversationStatus = "ready" | "submitted" | "compacting" | "streaming";

/** The chat's live state, beside the snapshot in the query cache. Changes a few times a turn, not per delta. */
export interface ConversationActivity {
  readonly status: ConversationStatus;
  /** Whether a turn runs (from the person's message to `turn-end`). */
  readonly turnRunning: boolean;
  /**
   * The fold that runs, with where it will cut (`firstKeptSeq`, when the engine says) and its progress (`piece` of
   * `pieces` read) once the summariser has read a piece.
   */
  readonly compacting: {
    readonly reason: CompactionReason;
    readonly firstKeptSeq?: number;
    readonly piece?: number;
    readonly pieces?: number;
  } | null;
  /** The `seq` of the message being written. */
  readonly streamingSeq: number | null;
  /** The last error from sending (not a turn problem: those are in the snapshot). */
  readonly error: unknown;
}

/** The message being written, as it streams. */
export interface StreamingMessageState {
  readonly seq: number;
  readonly text: string;
  readonly thinking: string;
  readonly toolCalls: readonly ToolCallPart[];
  readonly model?: string;
  /** The message ended; it stays here until the log has it, so nothing flickers. */
  readonly done: boolean;
}

export interface SendOptions {
  readonly attachments?: readonly PicturePart[];
  /**
   * Answer the person's message at this seq again instead of adding a new one, when it is still the log's
   * last message (a retry after a turn problem). Otherwise the text is sent as a new message.
   */
  readonly retrySeq?: number;
  /** The text is the host's fixed prompt to continue a cut-off reply, not the person's words: never learned from. */
  readonly continuation?: boolean;
}

/** The versions of a message, for a picker ("2 / 3"). */
export interface MessageSiblings {
  /** This version's place among them, from 0. */
  readonly index: number;
  readonly count: number;
  /** Their seqs, in seq order. */
  readonly seqs: readonly number[];
  /** Makes the branch through version `index` active (its newest leaf); settles with the chat on it. */
  select(index: number): Promise<ChatSnapshot>;
}

/** A message of the active branch as the conversation gives it: with its versions when it has others. */
export interface ConversationMessage extends ChatMessage {
  readonly siblings?: MessageSiblings;
}

/** Where the next message goes: the snapshot's `nextSeq` (every branch counted), else past its last message. */
function placeOfNext(snapshot: ChatSnapshot): number {
  return snapshot.nextSeq ?? nextSeq(snapshot.messages);
}

const idle: ConversationActivity = {
  status: "ready",
  turnRunning: false,
  compacting: null,
  streamingSeq: null,
  error: null,
};

function statusOf(activity: Omit<ConversationActivity, "status">): ConversationStatus {
  if (activity.compacting) return "compacting";
  if (activity.streamingSeq !== null && activity.turnRunning) return "streaming";
  if (activity.turnRunning) return "submitted";
  return "ready";
}

/**
 * One chat on one engine, over one cache: it folds the engine's events into the cached snapshot, keeps the
 * streaming message apart, and sends, aborts and compacts. Framework-free; Nacre's hooks read it with
 * `useSyncExternalStore` (get it there with `conversationStore(client, engine, chatId)`, so that every hook of
 * a chat shares it).
 */
export class ConversationStore {
  readonly engine: Engine;
  readonly chatId: string;
  readonly cache: ConversationCache;
  #listeners = new Set<() => void>();
  #activity: ConversationActivity = idle;
  #streaming: StreamingMessageState | null = null;
  #engineUnsubscribe: (() => void) | null = null;
  #holds = 0;
  #turnController: AbortController | null = null;
  #compactController: AbortController | null = null;
  #missedEvents = false;
  #shown = new WeakMap<ChatSnapshot, readonly ConversationMessage[]>();
  #versions = new WeakMap<BranchMessage, ConversationMessage>();

  constructor(engine: Engine, chatId: string, cache: ConversationCache) {
    this.engine = engine;
    this.chatId = chatId;
    this.cache = cache;
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    this.#hold();
    return () => {
      if (this.#listeners.delete(listener)) this.#release();
    };
  };

  readonly getActivity = (): ConversationActivity => this.#activity;
  readonly getStreaming = (): StreamingMessageState | null => this.#streaming;

  /** Sends the person's message as the next turn; settles with the turn's end (null when it could not start). */
  send(text: string, options: SendOptions = {}): Promise<EngineEventOf<"turn-end"> | null> {
    return this.#runTurn((snapshot, abortSignal) => {
      const last = snapshot.messages.at(-1);
      const retry = options.retrySeq !== undefined && last?.role === "user" && last.seq === options.retrySeq;
      return this.engine.sendTurn({
        chatId: this.chatId,
        seq: retry ? (options.retrySeq as number) : placeOfNext(snapshot),
        ...(retry ? { retry: true } : {}),
        text,
        ...(options.attachments ? { attachments: options.attachments } : {}),
        ...(options.continuation ? { continuation: true } : {}),
        abortSignal,
      });
    });
  }

  /**
   * Hands the host's results of the tools the model called back to the engine: the same turn goes on (the
   * results are one `tool` message at the next seq). Busy like `send`: null when a turn already runs.
   */
  sendToolResults(results: readonly ToolResultPart[]): Promise<EngineEventOf<"turn-end"> | null> {
    if (results.length === 0) return Promise.resolve(null);
    return this.#runTurn((snapshot, abortSignal) =>
      this.engine.sendTurn({
        chatId: this.chatId,
        seq: placeOfNext(snapshot),
        text: "",
        toolResults: results,
        abortSignal,
      }),
    );
  }

  /**
   * Replaces the person's message at `seq` with `text`: a new version beside it (nothing is cut), answered as
   * the active branch's next turn. Busy like `send`. Throws `BranchCapabilityMissingError` when the engine
   * does not declare `branches`, `TurnSequenceError` when `seq` is not a person's message of the active branch.
   */
  async edit(
    seq: number,
    text: string,
    options: Pick<SendOptions, "attachments"> = {},
  ): Promise<EngineEventOf<"turn-end"> | null> {
    this.#branches();
    return this.#afterBranching(
      this.#runTurn((snapshot, abortSignal) =>
        this.engine.sendTurn({
          chatId: this.chatId,
          seq: placeOfNext(snapshot),
          parent: parentOf(this.#personsMessage(snapshot, seq)),
          text,
          ...(options.attachments ? { attachments: options.attachments } : {}),
          abortSignal,
        }),
      ),
    );
  }

  /**
   * Asks for another answer to the person's message at `seq`, or to the one an answer at `seq` replies to: a
   * new version beside the old answer. Busy like `send`; throws like `edit`.
   */
  async regenerate(seq: number): Promise<EngineEventOf<"turn-end"> | null> {
    this.#branches();
    return this.#afterBranching(
      this.#runTurn((snapshot, abortSignal) => {
        const asked = snapshot.messages.findLast((message) => message.seq <= seq && message.role === "user");
        const message = this.#personsMessage(snapshot, asked?.seq ?? seq);
        return this.engine.sendTurn({
          chatId: this.chatId,
          seq: message.seq,
          retry: true,
          text: messageText(message),
          abortSignal,
        });
      }),
    );
  }

  /**
   * Makes the branch through the message at `seq` active (its newest leaf) and shows it; settles with its
   * snapshot. Throws `BranchCapabilityMissingError` without `branches`; the engine refuses while a turn runs.
   */
  async selectBranch(seq: number): Promise<ChatSnapshot> {
    let snapshot: ChatSnapshot;
    try {
      snapshot = await this.#branches().selectBranch(this.chatId, seq);
    } catch (error) {
      this.#setActivity({ error });
      throw error;
    }
    // The last answer written stays shown until the log has it; on another branch, the log never will.
    if (this.#streaming?.done) this.#setStreaming(null);
    this.cache.put(snapshot);
    this.cache.invalidateUsage();
    return snapshot;
  }

  /**
   * The active branch's messages, each with its versions (`siblings`) when it has others. The same array for
   * the same snapshot, and the same message object for the same message, so rows re-render only when theirs
   * changed.
   */
  messagesOf(snapshot: ChatSnapshot): readonly ConversationMessage[] {
    let shown = this.#shown.get(snapshot);
    if (!shown) {
      shown = snapshot.messages.map((message) => this.#withVersions(message));
      this.#shown.set(snapshot, shown);
    }
    return shown;
  }

  #withVersions(message: BranchMessage): ConversationMessage {
    const seqs = message.siblings;
    if (!seqs || seqs.length < 2) {
      // No other version: the engine's message itself, so that its row keeps its identity.
      if (!seqs) return message as ChatMessage;
      const { siblings: _alone, ...plain } = message;
      return plain;
    }
    let shown = this.#versions.get(message);
    if (!shown) {
      const siblings: MessageSiblings = {
        index: Math.max(0, seqs.indexOf(message.seq)),
        count: seqs.length,
        seqs,
        select: (index) => this.selectBranch(seqs[Math.min(Math.max(0, index), seqs.length - 1)] as number),
      };
      shown = { ...message, siblings };
      this.#versions.set(message, shown);
    }
    return shown;
  }

  #branches() {
    const branches = this.engine.capabilities.branches;
    if (!branches) throw new BranchCapabilityMissingError(this.engine.id);
    return branches;
  }

  #personsMessage(snapshot: ChatSnapshot, seq: number): ChatMessage {
    const message = snapshot.messages.find((shown) => shown.seq === seq);
    if (message?.role !== "user") {
      throw new TurnSequenceError({ chatId: this.chatId, expectedSeq: placeOfNext(snapshot), actualSeq: seq });
    }
    return message;
  }

  /** A turn that made a new version: read the chat again, so every message shows its versions. */
  async #afterBranching(turn: Promise<EngineEventOf<"turn-end"> | null>): Promise<EngineEventOf<"turn-end"> | null> {
    const end = await turn;
    if (end) await this.cache.refetch();
    return end;
  }

  /** One turn at a time, whatever starts it: busy state, abort, and one more try on a stale seq. */
  async #runTurn(
    start: (snapshot: ChatSnapshot, abortSignal: AbortSignal) => TurnStream,
  ): Promise<EngineEventOf<"turn-end"> | null> {
    if (this.#activity.turnRunning) return null;
    this.#hold();
    const controller = new AbortController();
    this.#turnController = controller;
    this.#setActivity({ turnRunning: true, error: null });
    try {
      try {
        return await start(await this.cache.ensure(), controller.signal).done;
      } catch (error) {
        // Someone else wrote to the log (another tab, another component): read it again and try once more.
        // Every engine says so through the turn (a remote one can only learn it from its server).
        if (!TurnSequenceError.isInstance(error)) throw error;
        return await start(await this.cache.refetch(), controller.signal).done;
      }
    } catch (error) {
      if (isAbortError(error)) return null;
      this.#setActivity({ error });
      throw error;
    } finally {
      if (this.#turnController === controller) this.#turnController = null;
      if (this.#activity.turnRunning) this.#setActivity({ turnRunning: false, streamingSeq: null });
      this.#release();
    }
  }

  /** Stops the running turn and the running fold on request. */
  abort(): void {
    this.#turnController?.abort();
    this.#compactController?.abort();
  }

  /** Folds all but the newest turn now. Throws when the engine does not declare `context`. */
  async compact(keep?: string): Promise<CompactResult> {
    const context = this.engine.capabilities.context;
    if (!context) throw new ContextCapabilityMissingError(this.engine.id);
    this.#hold();
    const controller = new AbortController();
    this.#compactController = controller;
    this.#setActivity({ compacting: { reason: "manual" } });
    try {
      const result = await context.compact(this.chatId, {
        ...(keep ? { keep } : {}),
        abortSignal: controller.signal,
      });
      if (result.status === "compacted") {
        this.#updateChat((chat) => reduceChat(chat, { type: "compacted", chatId: this.chatId, ...result.summary }));
        this.cache.invalidateUsage();
      }
      return result;
    } catch (error) {
      if (isAbortError(error)) return { status: "aborted" };
      throw error;
    } finally {
      if (this.#compactController === controller) this.#compactController = null;
      if (this.#activity.compacting?.reason === "manual") this.#setActivity({ compacting: null });
      this.#release();
    }
  }

  #hold(): void {
    this.#holds += 1;
    if (this.#engineUnsubscribe) return;
    this.#engineUnsubscribe = this.engine.subscribe(this.#onEvent);
    // Events may have passed while nobody listened: read the chat again if it was cached.
    if (this.#missedEvents && this.cache.peek()) this.cache.readAgain();
    this.#missedEvents = false;
  }

  #release(): void {
    this.#holds -= 1;
    if (this.#holds > 0 || !this.#engineUnsubscribe) return;
    this.#engineUnsubscribe();
    this.#engineUnsubscribe = null;
    this.#missedEvents = true;
  }

  #emit(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #setActivity(patch: Partial<Omit<ConversationActivity, "status">>): void {
    const next = { ...this.#activity, ...patch };
    const status = statusOf(next);
    const previous = this.#activity;
    if (
      previous.turnRunning === next.turnRunning &&
      previous.compacting === next.compacting &&
      previous.streamingSeq === next.streamingSeq &&
      previous.error === next.error &&
      previous.status === status
    ) {
      return;
    }
    this.#activity = { ...next, status };
    this.#emit();
  }

  #setStreaming(streaming: StreamingMessageState | null): void {
    if (streaming === this.#streaming) return;
    this.#streaming = streaming;
    this.#emit();
  }

  #updateChat(update: (chat: ChatSnapshot) => ChatSnapshot): void {
    const current = this.cache.peek();
    if (!current) {
      this.cache.readAgain();
      return;
    }
    const next = update(current);
    if (next !== current) this.cache.put(next);
  }

  readonly #onEvent = (event: EngineEvent): void => {
    if (event.chatId !== this.chatId) return;
    this.#updateChat((chat) => reduceChat(chat, event));
    switch (event.type) {
      case "turn-start":
        this.#setStreaming(null);
        this.#setActivity({ turnRunning: true, streamingSeq: null });
        return;
      case "message-start":
        this.#setStreaming({
          seq: event.seq,
          text: "",
          thinking: "",
          toolCalls: [],
          ...(event.model ? { model: event.model } : {}),
          done: false,
        });
        this.#setActivity({ streamingSeq: event.seq });
        return;
      case "text-delta": {
        const streaming = this.#streaming;
        if (streaming?.seq === event.seq) this.#setStreaming({ ...streaming, text: streaming.text + event.delta });
        return;
      }
      case "thinking-delta": {
        const streaming = this.#streaming;
        if (streaming?.seq === event.seq)
          this.#setStreaming({ ...streaming, thinking: streaming.thinking + event.delta });
        return;
      }
      case "tool-call": {
        const streaming = this.#streaming;
        if (streaming?.seq === event.seq) {
          const part: ToolCallPart = { type: "tool-call", id: event.id, name: event.name, arguments: event.arguments };
          this.#setStreaming({ ...streaming, toolCalls: [...streaming.toolCalls, part] });
        }
        return;
      }
      case "message-end": {
        const streaming = this.#streaming;
        if (streaming?.seq === event.message.seq) this.#setStreaming({ ...streaming, done: true });
        this.#setActivity({ streamingSeq: null });
        return;
      }
      case "compacting":
        this.#setActivity({
          compacting: {
            reason: event.reason,
            ...(event.firstKeptSeq !== undefined ? { firstKeptSeq: event.firstKeptSeq } : {}),
            ...(event.piece !== undefined && event.pieces !== undefined
              ? { piece: event.piece, pieces: event.pieces }
              : {}),
          },
        });
        return;
      case "compacted":
        // In a turn, the turn's end says the usage; a fold on request elsewhere does not.
        if (!this.#activity.turnRunning) this.cache.invalidateUsage();
        this.#setActivity({ compacting: null });
        return;
      case "compaction-skipped":
        this.#setActivity({ compacting: null });
        return;
      case "turn-end":
        // A message the engine did not keep (aborted before a word) is not shown.
        if (this.#streaming && !this.#streaming.done) this.#setStreaming(null);
        this.#setActivity({ turnRunning: false, streamingSeq: null, compacting: null });
        if (event.contextUsage) this.cache.putUsage(event.contextUsage);
        else this.cache.invalidateUsage();
        return;
      case "usage":
      case "healed":
      case "health-note":
      case "turn-problem":
        return;
      default:
        event satisfies never;
    }
  };
}
