// Why PGlite gets a queue of its own (issue #32): PGlite runs one statement at a time and hands itself to the next
// waiter through a promise, so a backlog of statements runs as one unbroken run of microtasks. Node reads no socket
// until that run ends, and it ends only when the backlog is empty, which under load it never quite is: a request
// on a new connection then waited for seconds while the turns already in went round again and again (at 64 turns
// at once, p95 was 15 to 30 times p50, the slowest first turns waiting 5 to 9 s). Here each statement starts in a
// task of its own, one at a time, in the order they were asked for: between two statements the process reads its
// sockets, so a turn that arrives meanwhile takes its place in the line instead of waiting for the line to empty.
import type { SqlEmbedded, SqlQueryable } from "./sql.js";

/** Runs `callback` in a task of its own, after what the event loop has waiting (sockets, timers). */
const nextTask: (callback: () => void) => void =
  typeof globalThis.setImmediate === "function"
    ? (callback) => {
        globalThis.setImmediate(callback);
      }
    : (callback) => {
        // Browsers: a message is a task, without the 4 ms clamp of a nested setTimeout.
        const channel = new MessageChannel();
        channel.port1.onmessage = () => {
          channel.port1.close();
          callback();
        };
        channel.port2.postMessage(null);
      };

/** One line per database: every store and running-turns object on one PGlite stands in the same line. */
const lines = new WeakMap<SqlEmbedded, SqlEmbedded>();

/**
 * The same PGlite, its statements and transactions run one at a time in the order they were asked for, each
 * starting in a task of its own. A transaction holds its place until it ends (its statements run inside it).
 * `listen` passes through.
 */
export function fairEmbedded(db: SqlEmbedded): SqlEmbedded {
  const existing = lines.get(db);
  if (existing) return existing;
  const waiting: Array<() => void> = [];
  let running = false;

  const startNext = (): void => {
    const start = waiting.shift();
    if (start) start();
    else running = false;
  };

  function inLine<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      waiting.push(() => {
        const done = (async () => work())();
        done.then(resolve, reject);
        const release = () => nextTask(startNext);
        done.then(release, release);
      });
      if (!running) {
        running = true;
        nextTask(startNext);
      }
    });
  }

  const fair: SqlEmbedded = {
    query: (text, params) => inLine(() => db.query(text, params)),
    transaction: <T>(callback: (tx: SqlQueryable) => Promise<T>) => inLine(() => db.transaction(callback)),
    listen: (channel, callback) => db.listen(channel, callback),
  };
  lines.set(db, fair);
  return fair;
}
