import type { TurnStream } from "../engine.js";
import type { EngineEvent, EngineEventOf } from "../events.js";

/** The producer side of a {@link TurnStream}. */
export interface TurnStreamWriter {
  push(event: EngineEvent): void;
  /** No more events; readers end once they have read what they were given (rejecting if `done` rejects). */
  close(): void;
  readonly stream: TurnStream;
}

interface Reader {
  readonly buffer: EngineEvent[];
  /** A pending `next()`: given the next event, or null when the stream closed. */
  waiting: ((event: EngineEvent | null) => void) | null;
}

/**
 * A turn's stream. Each reader gets the events from the moment it took its iterator (take it in the tick
 * `sendTurn` returned: the turn starts a microtask later), and a stream nobody reads buffers nothing: a
 * UI that reads `subscribe` and `done` pays nothing for it.
 */
export function createTurnStream(done: Promise<EngineEventOf<"turn-end">>): TurnStreamWriter {
  const readers = new Set<Reader>();
  let closed = false;
  const stream: TurnStream = {
    done,
    [Symbol.asyncIterator](): AsyncIterator<EngineEvent> {
      const reader: Reader = { buffer: [], waiting: null };
      if (!closed) readers.add(reader);
      const finish = async (): Promise<IteratorResult<EngineEvent>> => {
        // A turn that failed outright (busy, a seq that does not follow the log) rejects the reader too.
        await done;
        return { value: undefined, done: true };
      };
      return {
        next() {
          const value = reader.buffer.shift();
          if (value !== undefined) return Promise.resolve({ value, done: false });
          if (closed || !readers.has(reader)) return finish();
          return new Promise<EngineEvent | null>((resolve) => {
            reader.waiting = resolve;
          }).then((event) => (event === null ? finish() : { value: event, done: false }));
        },
        return() {
          readers.delete(reader);
          reader.buffer.length = 0;
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
  return {
    stream,
    push(event) {
      if (closed) return;
      for (const reader of readers) {
        const waiting = reader.waiting;
        if (waiting) {
          reader.waiting = null;
          waiting(event);
        } else reader.buffer.push(event);
      }
    },
    close() {
      if (closed) return;
      closed = true;
      for (const reader of readers) {
        const waiting = reader.waiting;
        reader.waiting = null;
        waiting?.(null);
      }
      readers.clear();
    },
  };
}
