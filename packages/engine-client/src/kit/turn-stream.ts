import type { TurnStream } from "../engine.js";
import type { EngineEvent, EngineEventOf } from "../events.js";
import { type Channel, createChannel } from "./channel.js";

/** The producer side of a {@link TurnStream}. */
export interface TurnStreamWriter {
  push(event: EngineEvent): void;
  /** No more events; readers end once they have read what they were given (rejecting if `done` rejects). */
  close(): void;
  readonly stream: TurnStream;
}

/**
 * A turn's stream. Each reader gets the events from the moment it took its iterator (take it in the tick
 * `sendTurn` returned: the turn starts a microtask later), and a stream nobody reads buffers nothing: a
 * UI that reads `subscribe` and `done` pays nothing for it.
 */
export function createTurnStream(done: Promise<EngineEventOf<"turn-end">>): TurnStreamWriter {
  const readers = new Set<Channel<EngineEvent>>();
  let closed = false;
  const stream: TurnStream = {
    done,
    [Symbol.asyncIterator](): AsyncIterator<EngineEvent> {
      const reader = createChannel<EngineEvent>();
      if (closed) reader.close();
      else readers.add(reader);
      const iterator = reader[Symbol.asyncIterator]();
      return {
        async next() {
          const result = await iterator.next();
          // A turn that failed outright (busy, a seq that does not follow the log) rejects the reader too.
          if (result.done) await done;
          return result;
        },
        return() {
          readers.delete(reader);
          return iterator.return?.() ?? Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
  return {
    stream,
    push(event) {
      if (closed) return;
      for (const reader of readers) reader.push(event);
    },
    close() {
      if (closed) return;
      closed = true;
      for (const reader of readers) reader.close();
      readers.clear();
    },
  };
}
