// The protocol's event stream (docs/protocol.md): each engine event one SSE event, `id:` its id, `data:` the
// event as one line of JSON. The handler writes it, the remote engine and the tests read it.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { EngineEvent } from "../events.js";

/** An engine event with its id: ids increase within a chat and are opaque to clients. */
export interface NumberedEvent {
  readonly id: string;
  readonly event: EngineEvent;
}

/** One SSE event per engine event; `redact` is applied to the event's JSON before it leaves. */
export function encodeEvent(numbered: NumberedEvent, redact: (text: string) => string): string {
  return `id: ${numbered.id}\ndata: ${redact(JSON.stringify(numbered.event))}\n\n`;
}

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
