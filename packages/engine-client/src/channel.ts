/**
 * A push-based async queue: the producer runs at once and never waits for the reader, and the reader
 * gets every value in order. Turns start eagerly this way, so listeners see events even if nobody reads
 * the turn's stream.
 */
export interface Channel<T> extends AsyncIterable<T> {
  push(value: T): void;
  close(): void;
  readonly closed: boolean;
}

export function createChannel<T>(): Channel<T> {
  const buffer: T[] = [];
  const waiting: Array<(result: IteratorResult<T>) => void> = [];
  let closed = false;

  return {
    get closed() {
      return closed;
    },
    push(value) {
      if (closed) return;
      const resolve = waiting.shift();
      if (resolve) resolve({ value, done: false });
      else buffer.push(value);
    },
    close() {
      if (closed) return;
      closed = true;
      for (const resolve of waiting.splice(0)) resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return {
        next(): Promise<IteratorResult<T>> {
          if (buffer.length > 0) return Promise.resolve({ value: buffer.shift() as T, done: false });
          if (closed) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => waiting.push(resolve));
        },
        return(): Promise<IteratorResult<T>> {
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}

/** Waits `ms`, or rejects with an AbortError as soon as `signal` aborts. Zero waits one macrotask. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function abortReason(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && (reason.name === "AbortError" || reason.name === "TimeoutError")) return reason;
  return new DOMException("The turn was aborted", "AbortError");
}
