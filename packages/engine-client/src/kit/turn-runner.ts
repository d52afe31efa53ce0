import type { TurnInput, TurnStream } from "../engine.js";
import { assertSafeChatId, ChatBusyError } from "../errors.js";
import type { EngineEvent, EngineEventOf } from "../events.js";
import { createChatQueue } from "./chat-queue.js";
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

/** Reads a turn this engine did not start, handing each event to `send` (listeners only). Ends with its `turn-end`. */
export type FollowedTurnBody = (send: (event: EngineEvent) => void) => Promise<EngineEventOf<"turn-end">>;

/** Runs every engine's turns the same way. */
export interface TurnRunner {
  /**
   * Starts a turn and returns its stream at once. Every rejection (an unsafe chat id, a busy chat, whatever
   * the body throws, a `TurnSequenceError` among them) surfaces through the stream and `done`, never thrown
   * here: a remote engine can only learn it from its server, so every engine says it the same way.
   */
  start(input: TurnInput, body: TurnBody): TurnStream;
  /**
   * Runs a turn this engine did not start (one a remote engine found running on its server when it loaded the
   * chat) as one of its own, except that only listeners hear it: the chat is busy until it ends. Null, and
   * nothing run, when a turn of the chat already runs here. The promise settles as the turn's `done` would.
   */
  follow(chatId: string, body: FollowedTurnBody): Promise<EngineEventOf<"turn-end">> | null;
  /** Runs a task in the chat's queue: after the turns and tasks queued before it (a fold on request, a save). */
  queued<T>(chatId: string, task: () => Promise<T>): Promise<T>;
  /** Whether a turn of the chat runs (or waits in the queue). */
  isBusy(chatId: string): boolean;
}

export function createTurnRunner(options: { readonly emit: (event: EngineEvent) => void }): TurnRunner {
  const queue = createChatQueue();
  const busy = new Set<string>();

  function begin(chatId: string, run: () => Promise<EngineEventOf<"turn-end">>) {
    assertSafeChatId(chatId);
    // Checked now, not in the queue: two sends in one tick are a busy chat, whoever awaits first.
    if (busy.has(chatId)) throw new ChatBusyError(chatId);
    busy.add(chatId);
    return queue.run(chatId, run).finally(() => busy.delete(chatId));
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
        done = begin(input.chatId, () => body({ input, chatId: input.chatId, send }));
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
    follow(chatId, body) {
      if (busy.has(chatId)) return null;
      return begin(chatId, () => body(options.emit));
    },
    queued(chatId, task) {
      return queue.run(chatId, task);
    },
    isBusy(chatId) {
      return busy.has(chatId);
    },
  };
}
