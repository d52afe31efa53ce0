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

/** The UTF-8 size of a string, without encoding it (an 8 MB transcript would be copied just to be measured). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
      bytes += 4;
      index++;
    } else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
