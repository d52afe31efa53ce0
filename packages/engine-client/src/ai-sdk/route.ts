import { createUIMessageStreamResponse } from "ai";
import { z } from "zod";
import { type Engine, hasBranches } from "../engine.js";
import { assertSafeChatId, InvalidChatIdError, NacreChatRefusedError } from "../errors.js";
import type { EngineEvent } from "../events.js";
import { startLeasedTurn } from "../server/leased-turn.js";
import { type ProblemAnswer, problem, turnRefusalProblem } from "../server/problems.js";
import { type ChatKey, createInProcessRunningTurns, type RunningTurns } from "../server/running-turns.js";
import { nacreChatMessages } from "./chat-messages.js";
import { startCompact } from "./compact.js";
import { turnToUIMessageStream } from "./map-turn.js";
import { type NacreTurnPlan, placeOnLog, planNacreTurn } from "./plan-turn.js";
import { answersOf, type NacreTurnOfPlan, runPlannedTurn, turnFields } from "./transport.js";
import type { NacreUIMessage } from "./ui-message.js";

/** Where the route's turns run, shared with the wire protocol's handler (`createEngineHandler({ runningTurns })`). */
export interface NacreRunningTurns {
  readonly runningTurns: RunningTurns;
  /** The signed-in person: the same chat id of two people names two chats. */
  readonly userId: string;
}

/** Options of {@link nacreChatResponse}. */
export interface NacreChatResponseOptions {
  readonly engine: Engine;
  readonly chatId: string;
  readonly message: NacreUIMessage;
  /** The seq the page expects the next message at; the engine refuses a stale one (409, as the wire protocol). */
  readonly seq: number;
  readonly trigger?: "submit-message" | "regenerate-message";
  readonly messageId?: string;
  /**
   * With them, the turn runs under the chat's lease and outlives the request: a reload resumes it (the route's
   * `GET …/{chatId}/stream`, or the wire protocol's `GET /chats/{id}/events`), and only an explicit stop
   * (`…/{chatId}/stop`, or the wire protocol's abort) ends it. Without them the request's signal stops the turn.
   */
  readonly turns?: NacreRunningTurns;
  /** The request's signal: it stops reading, and, without `turns`, the turn itself. */
  readonly signal?: AbortSignal;
}

/**
 * Runs the turn on the server's engine and answers with the UI message stream. A stale seq or a busy chat is
 * the wire protocol's 409 `application/problem+json` (with `nextSeq`), an edit or a regenerate that would cut the log (an engine without `branches`) a 400,
 * all before anything is written. `/compact [what to keep]` folds the chat instead of reaching the model.
 */
export async function nacreChatResponse(options: NacreChatResponseOptions): Promise<Response> {
  const { engine, chatId, signal, turns } = options;
  try {
    const planned = planNacreTurn({
      trigger: options.trigger ?? "submit-message",
      messageId: options.messageId,
      message: options.message,
      seq: options.seq,
    });
    const plan = await placeOnLog(engine, chatId, planned, signal);
    if (plan.kind === "compact") return await compactResponse(engine, chatId, plan, turns);
    if (turns) return await leasedTurnResponse(engine, { userId: turns.userId, chatId }, plan, turns, signal);
    return await firstChunkChecked(runPlannedTurn(engine, chatId, plan, signal));
  } catch (error) {
    return problemResponse(answerFor(error));
  }
}

/** The turn under the chat's lease; the response follows its recorded events, which a reload follows again. */
async function leasedTurnResponse(
  engine: Engine,
  key: ChatKey,
  plan: NacreTurnOfPlan,
  { runningTurns }: NacreRunningTurns,
  signal: AbortSignal | undefined,
): Promise<Response> {
  // The engine plans its fold ahead once the turn-end is on its way to the page (or the page has gone, or never
  // read the stream by the time the turn was over): planning it, which measures the whole chat, then never holds
  // the turn-end back, however the running turns deliver it. A turn refused at its start plans nothing.
  let turnEndSent: () => void = () => undefined;
  const foldAheadAfter = new Promise<void>((resolve) => {
    turnEndSent = resolve;
  });
  let following = false;
  const lease = await startLeasedTurn(
    runningTurns,
    key,
    engine,
    { seq: plan.seq, ...turnFields(plan), foldAheadAfter },
    {
      // What fails past the first event ends the turn with a problem its followers read; nothing else to tell.
      onError: () => undefined,
      onSettled: () => {
        if (!following) turnEndSent();
      },
    },
  );
  if (!lease) return problemResponse(problem("busy", 409));
  return createUIMessageStreamResponse({
    stream: turnToUIMessageStream(
      followTurn(runningTurns, key, lease.startCursor, signal, {
        onStart: () => {
          following = true;
        },
        onTurnEnd: turnEndSent,
      }),
      answersOf(plan),
    ),
  });
}

async function compactResponse(
  engine: Engine,
  chatId: string,
  plan: Extract<NacreTurnPlan, { kind: "compact" }>,
  turns: NacreRunningTurns | undefined,
): Promise<Response> {
  // A fold holds the chat as a turn would: a turn started meanwhile (here or through the wire protocol) is a 409.
  const lease = turns ? await turns.runningTurns.tryAcquire({ userId: turns.userId, chatId }, "compact") : null;
  if (turns && !lease) return problemResponse(problem("busy", 409));
  const { stream, done } = startCompact(engine, chatId, plan, {
    ...(lease
      ? {
          abortSignal: lease.abortSignal,
          onEvent: (event: EngineEvent) => void lease.record(event).catch(() => undefined),
        }
      : {}),
  });
  void done.finally(() => lease?.release()).catch(() => undefined);
  return firstChunkChecked(stream);
}

/** The chat's running turn as recorded from `after` on, up to its `turn-end` or until `signal` aborts. */
async function* followTurn(
  runningTurns: RunningTurns,
  key: ChatKey,
  after: string | null,
  signal: AbortSignal | undefined,
  hooks: {
    /** Following has begun (the stream is being read). */
    readonly onStart?: () => void;
    /** The turn-end is being handed on, or following ended without it. */
    readonly onTurnEnd?: () => void;
  } = {},
): AsyncGenerator<EngineEvent> {
  hooks.onStart?.();
  const onTurnEnd = hooks.onTurnEnd ?? (() => undefined);
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal?.addEventListener("abort", stop, { once: true });
  try {
    for await (const { event } of runningTurns.follow(key, after, controller.signal)) {
      if (event.type === "turn-end") onTurnEnd();
      yield event;
      if (event.type === "turn-end") return;
    }
  } finally {
    onTurnEnd();
    signal?.removeEventListener("abort", stop);
    controller.abort();
  }
}

/** Reads up to the first chunk, so that a turn refused at its start is a problem response, not a broken stream. */
async function firstChunkChecked<T>(stream: ReadableStream<T>): Promise<Response> {
  const reader = stream.getReader();
  const first = await reader.read();
  const rest = new ReadableStream<T>({
    start(controller) {
      if (first.done) controller.close();
      else controller.enqueue(first.value);
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return createUIMessageStreamResponse({ stream: rest as ReadableStream<never> });
}

/** The body's shape; the message's parts are checked by what reads them. Made when first needed (a page never does). */
const requestBodySchema = () =>
  z.object({
    id: z.string().min(1),
    trigger: z.enum(["submit-message", "regenerate-message"]),
    messageId: z.string().optional(),
    seq: z.number().int().min(0),
    message: z.looseObject({
      id: z.string(),
      role: z.enum(["user", "assistant", "system"]),
      metadata: z.looseObject({ seq: z.number().int().min(0) }).optional(),
      parts: z.array(z.looseObject({ type: z.string() })),
    }),
  });

/** Options of {@link createNacreChatRoute}. */
export interface NacreChatRouteOptions {
  /**
   * Where turns run: pass the wire protocol handler's, so that both see one running turn per chat (its events
   * endpoint resumes the route's turns, its abort stops them). Default: the route's own, in this process.
   */
  readonly runningTurns?: RunningTurns;
  /** The signed-in person of a request (your session's); the same as the wire protocol handler's `authorize`. */
  readonly userId?: (request: Request) => string | Promise<string>;
}

/**
 * A whole route for `useChat` on a server engine, `{api}` being where it is mounted:
 * - `POST {api}` runs a turn (the body of {@link nacreSendMessagesRequest}) that outlives the request: closing a
 *   connection (a reload) never stops a turn;
 * - `GET {api}/{chatId}/stream` resumes the chat's running turn from its start (`useChat({ resume: true })`), 204
 *   when none runs;
 * - `POST {api}/{chatId}/stop` stops it, answering once it has ended (what `nacreChatFetch` sends on `stop()`);
 * - `GET {api}?id=` answers `{ messages }` for `useChat`'s first messages.
 *
 * Mount it after your own sign-in check; the engine's chat ids are the route's.
 */
export function createNacreChatRoute(
  engine: Engine,
  options: NacreChatRouteOptions = {},
): (request: Request) => Promise<Response> {
  const runningTurns = options.runningTurns ?? createInProcessRunningTurns();
  const userIdOf = options.userId ?? (() => "anonymous");
  return async (request) => {
    const url = new URL(request.url);
    const action = /\/([^/]+)\/(stream|stop)$/.exec(url.pathname);
    if (action) {
      let key: ChatKey;
      try {
        const chatId = decodeURIComponent(action[1] as string);
        assertSafeChatId(chatId);
        key = { userId: await userIdOf(request), chatId };
      } catch (error) {
        if (error instanceof URIError || InvalidChatIdError.isInstance(error)) {
          return problemResponse(problem("invalid-chat-id", 400));
        }
        throw error;
      }
      if (action[2] === "stream") {
        if (request.method !== "GET") return problemResponse(problem("method-not-allowed", 405, {}, { allow: "GET" }));
        return resumeResponse(runningTurns, key, request.signal);
      }
      if (request.method !== "POST") return problemResponse(problem("method-not-allowed", 405, {}, { allow: "POST" }));
      const stopped = await runningTurns.requestAbort(key);
      // Answer once the turn has ended (with its `turn-end`), or after 10 s at most, as the wire protocol's abort.
      if (stopped) await runningTurns.settled(key, AbortSignal.timeout(10_000)).catch(() => undefined);
      return Response.json({ stopped }, { headers: { "cache-control": "no-store" } });
    }
    if (request.method === "GET") {
      const chatId = url.searchParams.get("id");
      if (!chatId) return problemResponse(problem("bad-request", 400, { detail: "Name the chat: ?id=" }));
      try {
        // As the wire protocol's chat page: read the activity first, and while a turn runs stop the snapshot at
        // its opening message, since resuming replays the rest from its turn-start, each part once.
        const activity = await runningTurns.activity({ userId: await userIdOf(request), chatId });
        const snapshot = await engine.loadChat(chatId, { abortSignal: request.signal });
        const turnSeq = activity.running ? activity.turnSeq : null;
        const messages = nacreChatMessages(
          turnSeq === null
            ? snapshot
            : { ...snapshot, messages: snapshot.messages.filter((message) => message.seq <= turnSeq), problem: null },
        );
        // `versions`: whether the engine keeps them (`branches`), so that the page offers Edit and Regenerate.
        return Response.json({ messages, versions: hasBranches(engine) }, { headers: { "cache-control": "no-store" } });
      } catch (error) {
        return problemResponse(answerFor(error));
      }
    }
    if (request.method !== "POST")
      return problemResponse(problem("method-not-allowed", 405, {}, { allow: "GET, POST" }));
    let json: unknown;
    try {
      json = await request.json();
    } catch {
      return problemResponse(problem("invalid-json", 400));
    }
    const parsed = requestBodySchema().safeParse(json);
    if (!parsed.success) {
      return problemResponse(
        problem("invalid-body", 400, {
          issues: parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
        }),
      );
    }
    const body = parsed.data;
    return nacreChatResponse({
      engine,
      chatId: body.id,
      message: body.message as unknown as NacreUIMessage,
      seq: body.seq,
      trigger: body.trigger,
      ...(body.messageId !== undefined ? { messageId: body.messageId } : {}),
      turns: { runningTurns, userId: await userIdOf(request) },
      signal: request.signal,
    });
  };
}

/** The chat's running turn from its `turn-start`, each event once, then live; 204 when none runs. */
async function resumeResponse(runningTurns: RunningTurns, key: ChatKey, signal: AbortSignal): Promise<Response> {
  const activity = await runningTurns.activity(key);
  if (!activity.running) return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  return createUIMessageStreamResponse({
    stream: turnToUIMessageStream(followTurn(runningTurns, key, activity.cursor, signal)),
  });
}

function answerFor(error: unknown): ProblemAnswer {
  const refusal = turnRefusalProblem(error);
  if (refusal) return refusal;
  if (NacreChatRefusedError.isInstance(error)) return problem("bad-request", 400, { detail: error.message });
  throw error;
}

function problemResponse(answer: ProblemAnswer): Response {
  return new Response(JSON.stringify(answer.problem), {
    status: answer.problem.status,
    headers: { ...answer.headers, "content-type": "application/problem+json", "cache-control": "no-store" },
  });
}
