import { readJsonBody } from "./body.js";
import { type Context, checkModel, engineOf, keyOf, takePlace } from "./context.js";
import { foldAheadFor, watchFoldAhead } from "./fold-ahead.js";
import { startLeasedTurn } from "./leased-turn.js";
import { fail } from "./problems.js";
import { turnRequestSchema } from "./schemas.js";
import { eventStreamResponse } from "./sse.js";

/**
 * `POST /chats/{chatId}/turns`: checks the body and the person's limits, takes the chat's lease (409 when a
 * turn runs), starts the turn and waits for its first event, so that a stale seq is a 409 with nothing
 * written; then streams the turn's events. The turn runs on whatever happens to the connection.
 */
export async function postTurn(context: Context, chatId: string): Promise<Response> {
  const { model, text, ...fields } = await readJsonBody(context.request, turnRequestSchema, {
    maxBytes: context.maxBodyBytes,
  });
  // A regenerate may leave the text out: the engine ignores it with `retry`.
  const input = { ...fields, text: text ?? "" };
  await checkModel(context, model);
  const wait = context.limits.retryAfter(context.userId);
  if (wait > 0) fail("rate-limited", 429, { retryAfter: wait }, { "retry-after": String(wait) });
  const key = keyOf(context, chatId);
  // A fold ahead of the chat runs in one of this handler's engines: the turn goes there, to use it.
  const ahead = foldAheadFor(context.foldsAhead, key, model);
  ahead?.handOver();
  const engine = ahead?.engine ?? (await engineOf(context, model));
  const watch = watchFoldAhead(context.turns, context.foldsAhead, key, engine, (error) =>
    context.onError(error, { during: "fold-ahead", chatId }),
  );
  // Places among what the person holds open, given back when the turn ends and when its stream closes; taken
  // with the chat's lease held, so that an attempt on a busy chat is a 409 and holds nothing.
  let releaseStream: () => void = () => undefined;
  let releaseTurn: () => void = () => undefined;
  let settle: () => void = () => undefined;
  // The stream's turn-end goes out once the chat's lease is given up: the person's next turn, sent the moment this
  // one ends, is then taken, never a 409 (on Postgres the release is a round trip after the turn-end is stored).
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  // The engine plans its fold ahead once the turn-end has gone out (or the stream closed): planning it, which
  // measures the whole chat, then never holds the turn-end back, even where the lease's release is a round trip.
  // A turn refused at its start plans nothing, so only the stream's close resolves it.
  let streamClosed: () => void = () => undefined;
  const foldAheadAfter = new Promise<void>((resolve) => {
    streamClosed = resolve;
  });
  let lease: Awaited<ReturnType<typeof startLeasedTurn>>;
  try {
    lease = await startLeasedTurn(
      context.turns,
      key,
      engine,
      { ...input, foldAheadAfter },
      {
        onTurnEnd: (usage) => context.limits.countTokens(context.userId, usage.inputTokens),
        onError: context.onError,
        secrets: context.secrets,
        admit: () => {
          releaseStream = takePlace(context, "streams");
          releaseTurn = takePlace(context, "turns");
        },
        onSettled: () => {
          releaseTurn();
          watch.turnSettled();
          settle();
        },
      },
    );
  } catch (error) {
    watch.stop();
    releaseTurn();
    releaseStream();
    throw error;
  }
  if (!lease) {
    watch.stop();
    return fail("busy", 409);
  }
  context.limits.countTurn(context.userId);

  const controller = new AbortController();
  context.request.signal.addEventListener("abort", () => controller.abort(), { once: true });
  const events = context.turns.follow(key, lease.startCursor, controller.signal);
  return eventStreamResponse(events, {
    controller,
    endAtTurnEnd: true,
    beforeTurnEnd: settled,
    redact: context.redact,
    headers: context.headers,
    onClose: () => {
      releaseStream();
      streamClosed();
    },
  });
}
