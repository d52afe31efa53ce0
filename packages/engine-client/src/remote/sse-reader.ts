import { createParser, type EventSourceMessage } from "eventsource-parser";

/**
 * The complete events of a `text/event-stream` body, in order. An event cut off by a dropped connection (no
 * blank line after it) is not yielded: a resume from the last id brings it whole.
 */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) yield pending.shift() as EventSourceMessage;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
