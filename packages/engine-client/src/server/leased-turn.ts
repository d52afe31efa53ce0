import type { Engine, TurnInput, TurnStream } from "../engine.js";
import { EmptyTurnStreamError, type ErrorHandler } from "../errors.js";
import type { EngineEvent } from "../events.js";
import { emptyUsage, type Usage } from "../messages.js";
import type { ChatKey, ChatLease, RunningTurns } from "./running-turns.js";
import { createStreamRedactor } from "./stream-redaction.js";

/** What a leased turn tells its caller while it runs. */
export interface LeasedTurnHooks {
  /** The turn's `turn-end` was recorded. */
  readonly onTurnEnd?: (usage: Usage) => void;
  /** The engine failed while recording (`during: "turn"`); the turn still ends for every follower. */
  readonly onError: ErrorHandler;
  /** Strings never recorded in a delta, even split across several (the provider's key). Default: none. */
  readonly secrets?: readonly string[];
  /**
   * Called with the lease held, before the engine starts: throwing refuses the turn (the lease is given up). A
   * bound on running turns is checked here, so that an attempt on a busy chat is a 409, never counted.
   */
  readonly admit?: () => void;
  /** The turn has ended and its lease is given up (not called when the turn was refused at its start). */
  readonly onSettled?: () => void;
}

/**
 * Runs a turn under the chat's lease, so that its events are the chat's running turn (what `GET …/events`
 * resumes and `POST …/abort` stops) whatever happens to the connection that started it. Null when another
 * holds the lease (a 409 for the caller); throws, with the lease given up, when the turn fails before its first
 * event (a stale seq): nothing was written then.
 */
export async function startLeasedTurn(
  turns: RunningTurns,
  key: ChatKey,
  engine: Engine,
  input: Omit<TurnInput, "chatId" | "abortSignal">,
  hooks: LeasedTurnHooks,
): Promise<ChatLease | null> {
  const lease = await turns.tryAcquire(key, "turn");
  if (!lease) return null;
  let iterator: AsyncIterator<EngineEvent>;
  let first: IteratorResult<EngineEvent>;
  try {
    hooks.admit?.();
    const stream: TurnStream = engine.sendTurn({ ...input, chatId: key.chatId, abortSignal: lease.abortSignal });
    // Read through the iterator below; `done` must not be left to reject unobserved.
    stream.done.catch(() => undefined);
    iterator = stream[Symbol.asyncIterator]();
    first = await iterator.next();
    if (first.done) throw new EmptyTurnStreamError(key.chatId, input.seq);
  } catch (error) {
    await lease.release();
    throw error;
  }
  void pump(lease, first.value, iterator, input.seq, key.chatId, hooks);
  return lease;
}

/** Records every event of the turn in order, then gives the chat's lease up. */
async function pump(
  lease: ChatLease,
  first: EngineEvent,
  iterator: AsyncIterator<EngineEvent>,
  seq: number,
  chatId: string,
  hooks: LeasedTurnHooks,
): Promise<void> {
  let ended = false;
  // What is recorded is what every follower and every resume gets: the secrets go before, not as each leaves.
  const redactor = createStreamRedactor(hooks.secrets ?? []);
  try {
    let next: IteratorResult<EngineEvent> = { done: false, value: first };
    while (!next.done) {
      const event = next.value;
      for (const redacted of redactor.push(event)) await lease.record(redacted);
      if (event.type === "turn-end") {
        ended = true;
        hooks.onTurnEnd?.(event.usage);
      }
      next = await iterator.next();
    }
  } catch (error) {
    hooks.onError(error, { during: "turn", chatId });
  } finally {
    // An engine that failed without its `turn-end` still ends the turn for every follower.
    if (!ended) {
      for (const held of redactor.flush()) await lease.record(held).catch(() => undefined);
      await lease
        .record({ type: "turn-end", chatId, seq, status: "problem", usage: emptyUsage })
        .catch(() => undefined);
    }
    await lease.release().catch(() => undefined);
    hooks.onSettled?.();
  }
}
