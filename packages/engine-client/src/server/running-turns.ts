// The per-chat lease and the running turn's events, behind one interface: the handler runs here in one process;
// a deployment of several instances gives them a shared one (Postgres), and nothing else changes.
import { ChatLeaseEndedError } from "../errors.js";
import type { EngineEvent } from "../events.js";
import { type Channel, createChannel } from "../kit/channel.js";
import type { NumberedEvent } from "../protocol/event-stream.js";

/** A chat of one person. The same `chatId` of two people names two chats. */
export interface ChatKey {
  readonly userId: string;
  readonly chatId: string;
}

export type { NumberedEvent };

/**
 * What a lease is for: a turn (its events become the chat's running turn), a fold on request, a deletion, a
 * branch switch, or a fold ahead of the need (after a turn, in the background), which gives way: any other lease
 * takes it over.
 */
export type LeasePurpose = "turn" | "compact" | "delete" | "branch" | "fold";

/** The right to change one chat; one at a time per chat, across every instance sharing the {@link RunningTurns}. */
export interface ChatLease {
  readonly purpose: LeasePurpose;
  /** The id just before this lease's first event: a follower from here gets all of them. */
  readonly startCursor: string | null;
  /**
   * Aborts when {@link RunningTurns.requestAbort} is called for the chat, from any instance, and when the lease is
   * lost (taken over: a fold ahead's, by a turn; expired).
   */
  readonly abortSignal: AbortSignal;
  /** Numbers and keeps the next event, and hands it to every follower. */
  record(event: EngineEvent): Promise<NumberedEvent>;
  /** Gives the lease up; followers then see no more events until the next lease. Idempotent. */
  release(): Promise<void>;
}

/** Where a chat stands: whether a turn runs, and the cursor a snapshot taken now is consistent with. */
export interface ChatActivity {
  readonly running: boolean;
  /** Running: the id before the turn's first event (its `turn-start`); idle: the chat's latest event id. */
  readonly cursor: string | null;
  /** Running: the log seq of the running turn's `turn-start` message. */
  readonly turnSeq: number | null;
}

export interface RunningTurns {
  /** The chat's lease, or null at once when another holds it. */
  tryAcquire(key: ChatKey, purpose: LeasePurpose): Promise<ChatLease | null>;
  /** The chat's lease once the current holder gives it up (or rejects when `signal` aborts). */
  acquire(key: ChatKey, purpose: LeasePurpose, signal?: AbortSignal): Promise<ChatLease>;
  activity(key: ChatKey): Promise<ChatActivity>;
  /**
   * The events of the chat's running (or last) turn after `after` (all of them when null, or when `after` is
   * older than that turn), then every new event until `signal` aborts.
   */
  follow(key: ChatKey, after: string | null, signal: AbortSignal): AsyncIterable<NumberedEvent>;
  /** Asks the running turn to stop; false when none runs. */
  requestAbort(key: ChatKey): Promise<boolean>;
  /** Resolves once no lease is held on the chat. */
  settled(key: ChatKey, signal?: AbortSignal): Promise<void>;
  /** Forgets the chat's events (a deleted chat). */
  forget(key: ChatKey): Promise<void>;
}

interface ChatRecord {
  lease: {
    readonly purpose: LeasePurpose;
    readonly controller: AbortController;
    readonly startCursor: string | null;
    /** Ends the lease for its holder at once (a fold ahead's, taken over). */
    readonly revoke: () => void;
  } | null;
  readonly waiting: Array<() => void>;
  /** The running or last turn's events and what followed it. */
  events: NumberedEvent[];
  lastId: number;
  turnSeq: number | null;
  readonly followers: Set<Channel<NumberedEvent>>;
  endedAt: number | null;
}

/** Options of {@link createInProcessRunningTurns}. */
export interface InProcessRunningTurnsOptions {
  /** How long a finished turn's events stay for a late reconnect. Default 10 minutes. */
  readonly keepFinishedMs?: number;
  readonly now?: () => number;
}

/** {@link RunningTurns} in this process, and how many chats it holds anything for. */
export interface InProcessRunningTurns extends RunningTurns {
  /** Chats it keeps a record of: a lease, a waiter, a follower, or a turn's events within the resume window. */
  heldChats(): number;
}

/** Resolves with what `ready` gives once it gives something, looking again each time a lease is released. */
function waitFor<T>(record: ChatRecord, signal: AbortSignal | undefined, ready: () => T | null): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const attempt = () => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const value = ready();
      if (value === null) record.waiting.push(attempt);
      else {
        signal?.removeEventListener("abort", onAbort);
        resolve(value);
      }
    };
    const onAbort = () => {
      const index = record.waiting.indexOf(attempt);
      if (index !== -1) record.waiting.splice(index, 1);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    attempt();
  });
}

const recordKey = (key: ChatKey): string => JSON.stringify([key.userId, key.chatId]);

/**
 * {@link RunningTurns} in this process's memory. Ids are decimal integers from the clock (microsecond scale), so
 * that they still increase after a restart though the events themselves are gone. A chat is kept only while it
 * holds something (a lease, a waiter, a follower, a turn's events in the resume window): naming a chat nobody
 * wrote keeps nothing, and every lookup is one map read whatever the number of chats.
 */
export function createInProcessRunningTurns(options: InProcessRunningTurnsOptions = {}): InProcessRunningTurns {
  const keepFinishedMs = options.keepFinishedMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const records = new Map<string, ChatRecord>();
  /** Chats whose last lease ended, oldest end first: a sweep reads only those past the resume window. */
  const ended = new Map<string, number>();

  function newRecord(): ChatRecord {
    return { lease: null, waiting: [], events: [], lastId: 0, turnSeq: null, followers: new Set(), endedAt: null };
  }

  /** The chat's record, made when `create` (a lease or a follower needs one); else null for a chat held nowhere. */
  function recordOf(key: ChatKey, create: true): ChatRecord;
  function recordOf(key: ChatKey, create?: false): ChatRecord | null;
  function recordOf(key: ChatKey, create = false): ChatRecord | null {
    sweep();
    const name = recordKey(key);
    let record = records.get(name) ?? null;
    if (!record && create) {
      record = newRecord();
      records.set(name, record);
    }
    return record;
  }

  const idle = (record: ChatRecord) => !record.lease && record.followers.size === 0 && record.waiting.length === 0;

  /** Drops the chat once nothing holds it and its events (if any) are past the resume window. */
  function dropIfDone(name: string, record: ChatRecord): void {
    if (records.get(name) !== record || !idle(record)) return;
    const expired = record.endedAt !== null && record.endedAt < now() - keepFinishedMs;
    if (record.events.length > 0 && !expired) return;
    records.delete(name);
    ended.delete(name);
  }

  /** Drops chats whose last turn ended before the resume window; one still followed goes when its follower does. */
  function sweep(): void {
    const before = now() - keepFinishedMs;
    for (const [name, endedAt] of ended) {
      if (endedAt >= before) break;
      ended.delete(name);
      const record = records.get(name);
      if (record) dropIfDone(name, record);
    }
  }

  function take(name: string, record: ChatRecord, purpose: LeasePurpose): ChatLease {
    const controller = new AbortController();
    const base = Math.max(now() * 1000, record.lastId + 1);
    const startCursor = base - 1 > 0 ? String(base - 1) : null;
    const revoke = () => {
      released = true;
      if (record.lease === lease) record.lease = null;
      controller.abort(new DOMException("The chat's lease was taken over", "AbortError"));
    };
    const lease = { purpose, controller, startCursor, revoke };
    record.lease = lease;
    record.endedAt = null;
    ended.delete(name);
    record.lastId = base - 1;
    // A turn's events replace the last turn's from its first event on: a turn refused before any (a stale seq)
    // leaves the last turn's events for their resume window.
    let fresh = purpose === "turn";
    let released = false;
    return {
      purpose,
      startCursor,
      abortSignal: controller.signal,
      async record(event) {
        if (released) throw new ChatLeaseEndedError(event.chatId, "released");
        if (fresh) {
          fresh = false;
          record.events = [];
          record.turnSeq = null;
        }
        record.lastId += 1;
        const numbered: NumberedEvent = { id: String(record.lastId), event };
        if (event.type === "turn-start") record.turnSeq = event.message.seq;
        record.events.push(numbered);
        for (const follower of record.followers) follower.push(numbered);
        return numbered;
      },
      async release() {
        if (released) return;
        released = true;
        if (record.lease === lease) record.lease = null;
        record.turnSeq = null;
        record.endedAt = now();
        ended.set(name, record.endedAt);
        // Every waiter looks again, in order: the first that wants the lease takes it, the rest wait on.
        for (const wake of record.waiting.splice(0)) wake();
        dropIfDone(name, record);
      },
    };
  }

  /** Whether a lease for `purpose` can be taken now: none is held, or a fold ahead's, which gives way. */
  function free(record: ChatRecord, purpose: LeasePurpose): boolean {
    if (record.lease?.purpose === "fold" && purpose !== "fold") record.lease.revoke();
    return record.lease === null;
  }

  /** Resolves once `ready` gives something, waiting on the chat's record meanwhile (dropped after, if empty). */
  async function whenReady<T>(
    key: ChatKey,
    signal: AbortSignal | undefined,
    ready: (name: string, record: ChatRecord) => T | null,
  ): Promise<T> {
    const name = recordKey(key);
    const record = recordOf(key, true);
    try {
      return await waitFor(record, signal, () => ready(name, record));
    } finally {
      dropIfDone(name, record);
    }
  }

  return {
    heldChats: () => {
      sweep();
      return records.size;
    },
    async tryAcquire(key, purpose) {
      const record = recordOf(key, true);
      const name = recordKey(key);
      return free(record, purpose) ? take(name, record, purpose) : null;
    },
    acquire(key, purpose, signal) {
      return whenReady(key, signal, (name, record) => (free(record, purpose) ? take(name, record, purpose) : null));
    },
    async activity(key) {
      const record = recordOf(key);
      if (record?.lease?.purpose === "turn") {
        return { running: true, cursor: record.lease.startCursor, turnSeq: record.turnSeq };
      }
      const lastId = record?.lastId ?? 0;
      return { running: false, cursor: lastId > 0 ? String(lastId) : null, turnSeq: null };
    },
    follow(key, after, signal) {
      const name = recordKey(key);
      const record = recordOf(key, true);
      const channel = createChannel<NumberedEvent>();
      const from = after !== null && /^\d+$/.test(after) ? Number(after) : -1;
      for (const numbered of record.events) if (Number(numbered.id) > from) channel.push(numbered);
      record.followers.add(channel);
      const stop = () => {
        record.followers.delete(channel);
        channel.close();
        dropIfDone(name, record);
      };
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
      return channel;
    },
    async requestAbort(key) {
      const record = recordOf(key);
      if (!record?.lease || record.lease.purpose === "delete") return false;
      record.lease.controller.abort(new DOMException("The turn was stopped", "AbortError"));
      return true;
    },
    async settled(key, signal) {
      if (!recordOf(key)?.lease) return;
      await whenReady(key, signal, (_name, record) => (record.lease ? null : true));
    },
    async forget(key) {
      const record = recordOf(key);
      if (!record) return;
      record.events = [];
      dropIfDone(recordKey(key), record);
    },
  };
}
