import type { TurnInput, TurnStream } from "../engine.js";
import { assertSafeChatId, ChatBusyError } from "../errors.js";
import type { EngineEvent, EngineEventOf } from "../events.js";
import { createChatQueue } from "../transcript/chat-queue.js";
import { createTurnStream } from "./turn-stream.js";

/** One running turn, as its body sees it. */
export interface Turn {
  readonly input: TurnInput;
  readonly chatId: string;
  /** To the turn's stream and to every listener. */
  send(event: EngineEvent): void;
}

/** What an engine does in a turn: everything between the checks and the end. Ends with its `turn-end`. */
export type TurnBody = (turn: Turn) => Promise<EngineEventOf<"turn-end">>;

/** Runs every engine's turns the same way. */
export interface TurnRunner {
  /**
   * Starts a turn and returns its stream at once. Every rejection (an unsafe chat id, a busy chat, whatever
   * the body throws, a `TurnSequenceError` among them) surfaces through the stream and `done`, never thrown
   * here: a remote engine can only learn it from its server, so every engine says it the same way.
   */
  start(input: TurnInput, body: TurnBody): TurnStream;
  /** Runs a task in the chat's queue: after the turns and tasks queued before it (a fold on request, a save). */
  queued<T>(chatId: string, task: () => Promise<T>): Promise<T>;
  /** Whether a turn of the chat runs (or waits in the queue). */
  isBusy(chatId: string): boolean;
}

export function createTurnRunner(options: { readonly emit: (event: EngineEvent) => void }): TurnRunner {
  const queue = createChatQueue();
  const busy = new Set<string>();

  function begin(input: TurnInput, body: TurnBody, send: (event: EngineEvent) => void) {
    const { chatId } = input;
    assertSafeChatId(chatId);
    // Checked now, not in the queue: two sends in one tick are a busy chat, whoever awaits first.
    if (busy.has(chatId)) throw new ChatBusyError(chatId);
    busy.add(chatId);
    return queue.run(chatId, () => body({ input, chatId, send })).finally(() => busy.delete(chatId));
  }

  return {
    start(input, body) {
      let push: (event: EngineEvent) => void = () => undefined;
      const send = (event: EngineEvent) => {
        push(event);
        options.emit(event);
      };
      let done: Promise<EngineEventOf<"turn-end">>;
      try {
        done = begin(input, body, send);
      } catch (error) {
        done = Promise.reject(error);
      }
      const writer = createTurnStream(done);
      push = writer.push;
      done.then(writer.close, writer.close);
      // `done` may go unread (a UI that reads only listeners); a rejection there is not unhandled.
      done.catch(() => undefined);
      return writer.stream;
    },
    queued(chatId, task) {
      return queue.run(chatId, task);
    },
    isBusy(chatId) {
      return busy.has(chatId);
    },
  };
}
