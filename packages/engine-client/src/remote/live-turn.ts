import { delay } from "../abort.js";
import { RemoteEngineError } from "../errors.js";
import type { EngineEvent, EngineEventOf } from "../events.js";
import { readEventStream } from "../protocol/event-stream.js";
import type { WireChatPage } from "../protocol/wire.js";
import { chatPath, problemError, type RemoteHttp } from "./http.js";

/** A turn this engine reads from the server: its own, or one it found running when it loaded the chat. */
export interface LiveTurn {
  /** The id of the last event read (where a resume starts). */
  lastId: string | null;
  /** The events read so far, with their ids (a snapshot loaded meanwhile replays the newer ones). */
  readonly events: { readonly id: number; readonly event: EngineEvent }[];
}

const reconnectDelaysMs = [100, 250, 500, 1_000, 2_000, 2_000, 4_000, 4_000];

/**
 * Reads a turn's events from `response` to its `turn-end`, handing each to `send` once. A stream that breaks
 * is resumed from the last id (`GET /events` with `Last-Event-ID`), a few times, as long as the server still
 * has the turn.
 */
export async function readTurn(
  http: RemoteHttp,
  chatId: string,
  live: LiveTurn,
  first: Response | null,
  send: (event: EngineEvent) => void,
): Promise<EngineEventOf<"turn-end">> {
  let response = first;
  let failures = 0;
  for (;;) {
    if (response) {
      try {
        for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
          if (message.data === "") continue;
          const event = JSON.parse(message.data) as EngineEvent;
          if (message.id !== undefined) {
            live.lastId = message.id;
            live.events.push({ id: Number(message.id), event });
          }
          failures = 0;
          send(event);
          if (event.type === "turn-end") return event;
        }
      } catch {
        // The connection dropped mid-stream: resume below.
      }
    }
    const wait = reconnectDelaysMs[failures];
    if (wait === undefined) {
      throw new RemoteEngineError({
        status: 0,
        problem: null,
        message: "The turn's stream broke and could not be resumed",
      });
    }
    failures += 1;
    await delay(wait);
    response = await resume(http, chatId, live).catch((error: unknown) => {
      if (RemoteEngineError.isInstance(error) && error.status !== 0) throw error;
      return null;
    });
  }
}

async function resume(http: RemoteHttp, chatId: string, live: LiveTurn): Promise<Response> {
  const page = await http.getJson<WireChatPage>(chatPath(chatId, "?limit=1"));
  // Idle with nothing after what was read: the server no longer has this turn (it restarted).
  if (!page.running && (page.cursor === null || (live.lastId !== null && Number(page.cursor) <= Number(live.lastId)))) {
    throw new RemoteEngineError({ status: 410, problem: null, message: "The server no longer has this turn" });
  }
  const response = await http.request(chatPath(chatId, "/events"), {
    headers: live.lastId !== null ? { "last-event-id": live.lastId } : {},
  });
  if (!response.ok) throw await problemError(response);
  return response;
}

/** What a fold ahead of the need sends after the turn before it. */
const foldEvents = new Set<EngineEvent["type"]>(["compacting", "compacted", "compaction-skipped", "health-note"]);

/**
 * Reads `GET /events?until=idle` after a turn's last event `after`, handing a fold ahead's events that follow the
 * turn to `send`, until the server says the chat is idle (the fold ended, or none followed), another turn begins
 * (its reader shows it), or `signal` aborts.
 */
export async function followFoldAhead(
  http: RemoteHttp,
  chatId: string,
  after: string,
  signal: AbortSignal,
  send: (event: EngineEvent) => void,
): Promise<void> {
  const response = await http.request(chatPath(chatId, "/events?until=idle"), {
    headers: { "last-event-id": after },
    signal,
  });
  if (!response.ok) throw await problemError(response);
  for await (const message of readEventStream(response.body as ReadableStream<Uint8Array>)) {
    if (message.data === "" || signal.aborted) continue;
    const event = JSON.parse(message.data) as EngineEvent;
    if (event.type === "turn-start") return;
    if (foldEvents.has(event.type)) send(event);
  }
}
