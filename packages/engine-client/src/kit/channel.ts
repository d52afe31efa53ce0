/**
 * The one async queue of the package: a producer pushes at once and never waits for the reader, and the reader
 * gets every value in order. A turn's stream gives each reader one; the server's followers and the AI SDK
 * transport's resumed streams are one each.
 */
export interface Channel<T> extends AsyncIterable<T> {
  push(value: T): void;
  /** No more values: the reader ends once it has read what was pushed. */
  close(): void;
  readonly closed: boolean;
}

export function createChannel<T>(): Channel<T> {
  const buffer: T[] = [];
  const waiting: Array<(result: IteratorResult<T>) => void> = [];
  let closed = false;

  const close = () => {
    if (closed) return;
    closed = true;
    for (const resolve of waiting.splice(0)) resolve({ value: undefined, done: true });
  };

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
    close,
    [Symbol.asyncIterator]() {
      return {
        next(): Promise<IteratorResult<T>> {
          if (buffer.length > 0) return Promise.resolve({ value: buffer.shift() as T, done: false });
          if (closed) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => waiting.push(resolve));
        },
        return(): Promise<IteratorResult<T>> {
          // A reader that stops (a `break`) is done with it: nothing more is kept for it.
          buffer.length = 0;
          close();
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}
