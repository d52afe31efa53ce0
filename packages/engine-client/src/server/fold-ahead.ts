import type { Engine } from "../engine.js";
import type { EngineEvent } from "../events.js";
import type { ChatKey, ChatLease, RunningTurns } from "./running-turns.js";

/**
 * A fold ahead planned or running in one of this handler's engines: the chat's next turn goes to that engine.
 * Entered once the turn before it has given its lease up, before its `turn-end` goes out.
 */
export interface FoldAheadEntry {
  readonly engine: Engine;
  /** A turn of the chat goes to this engine: the lease it takes over is no reason to stop the fold. */
  handOver(): void;
  /** Resolves once no fold ahead follows the turn, or the one that did has ended (its lease given up). */
  readonly ended: Promise<void>;
}

/** The folds ahead running in this handler's engines, by chat. */
export type FoldsAhead = Map<string, FoldAheadEntry>;

export const foldAheadKey = (key: ChatKey): string => JSON.stringify([key.userId, key.chatId]);

/**
 * The fold ahead running on the chat in one of this handler's engines, when a request naming `model` (or none)
 * may go to that engine: a turn goes there to use the fold, a branch switch to be ordered after its stop.
 */
export function foldAheadFor(folds: FoldsAhead, key: ChatKey, model: string | undefined): FoldAheadEntry | undefined {
  const ahead = folds.get(foldAheadKey(key));
  const aheadModel = (ahead?.engine as { readonly model?: unknown } | undefined)?.model;
  return ahead !== undefined && (model === undefined || model === aheadModel) ? ahead : undefined;
}

const foldEvents = new Set<EngineEvent["type"]>(["compacting", "compacted", "compaction-skipped", "health-note"]);

/**
 * Watches a turn's engine for the fold it may begin ahead of the need once the turn is over. Such a fold is the
 * chat's, under its lease (purpose `fold`): its events are recorded for `GET …/events`, `POST …/abort` stops it,
 * and any other lease takes it over (a turn runs at once: no 409). A turn taking it over on this handler goes to
 * the same engine (see {@link FoldAheadEntry}), which waits for the fold only if it must fold, and uses it;
 * taken over by anything else (a turn on another instance, a fold on request, a deletion), the fold stops, changing
 * nothing. Call `turnSettled` once the turn's lease is given up, `stop` when the turn never started.
 */
export function watchFoldAhead(
  turns: RunningTurns,
  folds: FoldsAhead,
  key: ChatKey,
  engine: Engine,
  onError: (error: unknown) => void,
): { turnSettled(): void; stop(): void } {
  const name = foldAheadKey(key);
  let turnOver = false;
  let finished = false;
  let handedOver = false;
  let lease: ChatLease | null = null;
  const held: EngineEvent[] = [];
  let ended: () => void = () => undefined;
  const entry: FoldAheadEntry = {
    engine,
    handOver() {
      handedOver = true;
    },
    ended: new Promise<void>((resolve) => {
      ended = resolve;
    }),
  };

  const finish = () => {
    if (finished) return;
    finished = true;
    unsubscribe();
    if (folds.get(name) === entry) folds.delete(name);
    const holding = lease;
    lease = null;
    if (!holding) ended();
    else void holding.release().catch(onError).finally(ended);
  };

  const record = (event: EngineEvent) => {
    if (lease) void lease.record(event).catch(() => undefined);
    if (event.type === "compacted" || event.type === "compaction-skipped") finish();
  };

  const unsubscribe = engine.subscribe((event) => {
    if (finished || event.chatId !== key.chatId) return;
    if (!turnOver) {
      // The turn's own events are its lease's; the fold's come after its end.
      if (event.type === "turn-end") turnOver = true;
      return;
    }
    // Another turn of this engine began on the chat: that turn's own watch takes over.
    if (event.type === "turn-start") return finish();
    if (!foldEvents.has(event.type)) return;
    if (lease) record(event);
    else held.push(event);
  });

  async function holdTheChat(): Promise<void> {
    const taken = await turns.tryAcquire(key, "fold");
    if (finished) {
      await taken?.release();
      return;
    }
    // Another took the chat meanwhile (a turn, on this instance or another): the fold is not this handler's to hold.
    if (!taken) return finish();
    lease = taken;
    taken.abortSignal.addEventListener(
      "abort",
      () => {
        // Stopped, or taken over by anything but a turn sent to this engine: the fold would be of no use.
        if (!handedOver) engine.capabilities.context?.stopFoldAhead?.(key.chatId);
        finish();
      },
      { once: true },
    );
    for (const event of held.splice(0)) record(event);
  }

  return {
    /** The turn never started (refused): nothing to watch. */
    stop: finish,
    turnSettled() {
      const planned = engine.capabilities.context?.foldAheadPlanned?.(key.chatId);
      if (finished || !planned) return finish();
      // Known here before the turn's `turn-end` goes out: a `GET …/events?until=idle` waits for the plan.
      folds.set(name, entry);
      // The engine plans its fold ahead after the turn's end, when it will: the chat is held once one runs.
      planned
        .then((running) => {
          if (finished) return;
          if (!running && held.length === 0) return finish();
          return holdTheChat();
        })
        .catch((error: unknown) => {
          onError(error);
          finish();
        });
    },
  };
}
