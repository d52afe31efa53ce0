import type { TurnStream } from "../engine.js";
import type { EngineEvent } from "../events.js";
import { emptyUsage } from "../messages.js";
import { readJsonBody } from "./body.js";
import { type Context, engineOf, keyOf } from "./context.js";
import { fail } from "./problems.js";
import type { ChatLease } from "./running-turns.js";
import { turnRequestSchema } from "./schemas.js";
import { eventStreamResponse } from "./sse.js";

/**
 * `POST /chats/{chatId}/turns`: checks the body and the person's limits, takes the chat's lease (409 when a
 * turn runs), starts the turn and waits for its first event, so that a stale seq is a 409 with nothing
 * written; then streams the turn's events. The turn runs on whatever happens to the connection.
 */
export async function postTurn(context: Context, chatId: string): Promise<Response> {
  const { model, ...input } = await readJsonBody(context.request, turnRequestSchema, {
    maxBytes: context.maxBodyBytes,
  });
  const wait = context.limits.retryAfter(context.userId);
  if (wait > 0) fail("rate-limited", 429, { retryAfter: wait }, { "retry-after": String(wait) });
  const key = keyOf(context, chatId);
  const lease = await context.turns.tryAcquire(key, "turn");
  if (!lease) return fail("busy", 409);

  let iterator: AsyncIterator<EngineEvent>;
  let first: IteratorResult<EngineEvent>;
  try {
    const engine = await engineOf(context, model);
    const stream: TurnStream = engine.sendTurn({ ...input, chatId, abortSignal: lease.abortSignal });
    // Read through the iterator below; `done` must not be left to reject unobserved.
    stream.done.catch(() => undefined);
    iterator = stream[Symbol.asyncIterator]();
    first = await iterator.next();
    if (first.done) throw new Error("The engine's turn ended without an event");
  } catch (error) {
    await lease.release();
    throw error;
  }
  context.limits.countTurn(context.userId);

  const controller = new AbortController();
  context.request.signal.addEventListener("abort", () => controller.abort(), { once: true });
  const events = context.turns.follow(key, lease.startCursor, controller.signal);
  void pump(context, lease, first.value, iterator, input.seq, chatId);
  return eventStreamResponse(events, {
    controller,
    endAtTurnEnd: true,
    redact: context.redact,
    headers: context.headers,
  });
}

/** Records every event of the turn in order, then gives the chat's lease up. */
async function pump(
  context: Context,
  lease: ChatLease,
  first: EngineEvent,
  iterator: AsyncIterator<EngineEvent>,
  seq: number,
  chatId: string,
): Promise<void> {
  let ended = false;
  try {
    let next: IteratorResult<EngineEvent> = { done: false, value: first };
    while (!next.done) {
      const event = next.value;
      await lease.record(event);
      if (event.type === "turn-end") {
        ended = true;
        context.limits.countTokens(context.userId, event.usage.inputTokens);
      }
      next = await iterator.next();
    }
  } catch (error) {
    context.onError(error);
  } finally {
    // An engine that failed without its `turn-end` still ends the turn for every follower.
    if (!ended) {
      await lease
        .record({ type: "turn-end", chatId, seq, status: "problem", usage: emptyUsage })
        .catch(() => undefined);
    }
    await lease.release();
  }
}
