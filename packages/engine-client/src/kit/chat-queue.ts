/**
 * Runs tasks one after another per chat, in the order they were queued, whatever the previous one did.
 * Reads queue too: a log read that ran beside an append could see the append's unfinished last line.
 */
export interface ChatQueue {
  run<T>(chatId: string, task: () => Promise<T>): Promise<T>;
}

/** A queue per chat id; a chat's entry goes away when its last task settles. */
export function createChatQueue(): ChatQueue {
  const tails = new Map<string, Promise<void>>();
  return {
    run<T>(chatId: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(chatId) ?? Promise.resolve();
      const result = previous.then(() => task());
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(chatId, tail);
      void tail.then(() => {
        if (tails.get(chatId) === tail) tails.delete(chatId);
      });
      return result;
    },
  };
}
