import { encodeEvent, type NumberedEvent } from "../protocol/event-stream.js";

/** Options of {@link eventStreamResponse}. */
export interface EventStreamOptions {
  /** Aborted when the client goes away (or the stream ends): the follower stops; the turn never does. */
  readonly controller: AbortController;
  /** End the stream after the first `turn-end` (the answer to `POST /turns`). */
  readonly endAtTurnEnd: boolean;
  /** With `endAtTurnEnd`: the `turn-end` is sent once this resolves (the turn's lease given up). */
  readonly beforeTurnEnd?: Promise<void>;
  /** Applied to each event's JSON before it leaves (removes the host's secrets). */
  readonly redact: (text: string) => string;
  readonly headers: Readonly<Record<string, string>>;
  /** A comment line this often, so that proxies keep an idle stream open. Default 15 s. */
  readonly heartbeatMs?: number;
  /** Called once when the stream ends, however it ends (its place among the person's open streams). */
  readonly onClose?: () => void;
}

const encoder = new TextEncoder();

/** A `text/event-stream` response over `events`. */
export function eventStreamResponse(events: AsyncIterable<NumberedEvent>, options: EventStreamOptions): Response {
  const { controller } = options;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    async start(sink) {
      const send = (text: string): boolean => {
        if (controller.signal.aborted) return false;
        try {
          sink.enqueue(encoder.encode(text));
          return true;
        } catch {
          controller.abort();
          return false;
        }
      };
      send("retry: 1000\n\n");
      heartbeat = setInterval(() => send(": keep-alive\n\n"), options.heartbeatMs ?? 15_000);
      try {
        for await (const numbered of events) {
          const ending = options.endAtTurnEnd && numbered.event.type === "turn-end";
          if (ending) await options.beforeTurnEnd;
          if (!send(encodeEvent(numbered, options.redact))) break;
          if (ending) break;
        }
      } finally {
        clearInterval(heartbeat);
        options.onClose?.();
        const open = !controller.signal.aborted;
        controller.abort();
        if (open) {
          try {
            sink.close();
          } catch {
            // Already closed by the client.
          }
        }
      }
    },
    cancel() {
      clearInterval(heartbeat);
      options.onClose?.();
      controller.abort();
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      ...options.headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
}
