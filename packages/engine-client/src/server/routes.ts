import {
  type BranchCapability,
  type ChatSnapshot,
  type ContextCapability,
  type Engine,
  hasBranches,
  hasContext,
} from "../engine.js";
import { assertSafeChatId, TurnSequenceError } from "../errors.js";
import type { EngineEvent } from "../events.js";
import type { ModelInfo } from "../messages.js";
import type {
  WireAbortResponse,
  WireCapabilities,
  WireChatList,
  WireChatPage,
  WireCompactResponse,
  WireModels,
  WireRenameResponse,
} from "../protocol/wire.js";
import { protocolVersion } from "../protocol/wire.js";
import { chatTitle } from "../transcript/chat-directory.js";
import { readJsonBody } from "./body.js";
import { type Context, checkModel, engineOf, json, keyOf, type Route, takePlace } from "./context.js";
import { foldAheadFor } from "./fold-ahead.js";
import { fail } from "./problems.js";
import type { ChatActivity, ChatKey, NumberedEvent } from "./running-turns.js";
import {
  branchRequestSchema,
  compactRequestSchema,
  emptyRequestSchema,
  intParam,
  modelParam,
  renameRequestSchema,
} from "./schemas.js";
import { eventStreamResponse } from "./sse.js";
import { postTurn } from "./turn-route.js";

function contextOf(engine: Engine): ContextCapability {
  if (!hasContext(engine)) return fail("no-context", 404);
  return engine.capabilities.context;
}

function branchesOf(engine: Engine): BranchCapability {
  if (!hasBranches(engine)) return fail("no-branches", 404);
  return engine.capabilities.branches;
}

const pageLimit = { fallback: 200, max: 1_000 };

type Methods = Partial<
  Record<"GET" | "POST" | "PATCH" | "DELETE", (context: Context, chatId: string) => Promise<Response>>
>;

const chatRoutes: Readonly<Record<string, Methods>> = {
  "": { GET: getChat, PATCH: renameChat, DELETE: deleteChat },
  "/turns": { POST: postTurn },
  "/branch": { POST: postBranch },
  "/events": { GET: getEvents },
  "/abort": { POST: postAbort },
  "/compact": { POST: postCompact },
  "/usage": { GET: getUsage },
};

const topRoutes: Readonly<Record<string, Partial<Record<"GET", Route>>>> = {
  "/capabilities": { GET: getCapabilities },
  "/models": { GET: getModels },
  "/chats": { GET: getChats },
};

function pick<T>(methods: Partial<Record<string, T>>, method: string): T {
  const found = methods[method];
  if (found) return found;
  return fail("method-not-allowed", 405, {}, { allow: Object.keys(methods).join(", ") });
}

/** The endpoint of a path (after the mount point) and method; 404 and 405 otherwise. */
export function routeFor(path: string, method: string): Route {
  const top = topRoutes[path];
  if (top) return pick(top, method);
  const match = /^\/chats\/([^/]+)(\/[a-z]+)?$/.exec(path);
  const methods = match ? chatRoutes[match[2] ?? ""] : undefined;
  if (!match || !methods) return fail("not-found", 404);
  const endpoint = pick(methods, method);
  let chatId: string;
  try {
    chatId = decodeURIComponent(match[1] as string);
  } catch {
    return fail("invalid-chat-id", 400, { detail: "The chat id is not valid percent-encoding." });
  }
  assertSafeChatId(chatId);
  return (context) => endpoint(context, chatId);
}

async function getCapabilities(context: Context): Promise<Response> {
  const engine = await engineOf(context);
  const body: WireCapabilities = {
    protocol: protocolVersion,
    engine: { id: engine.id, displayName: engine.displayName },
    context: hasContext(engine),
    branches: hasBranches(engine),
    eventsUntilIdle: true,
  };
  return json(context, body);
}

async function getModels(context: Context): Promise<Response> {
  const models: readonly ModelInfo[] = await context.models();
  const body: WireModels = { models };
  return json(context, body);
}

async function getChats(context: Context): Promise<Response> {
  const directory = context.options.chats?.(context.userId);
  if (!directory) return fail("not-found", 404, { detail: "This server keeps no chat list." });
  const offset = intParam(context.url, "offset", 0);
  const limit = intParam(context.url, "limit", 50, 200);
  if (Number.isNaN(offset) || Number.isNaN(limit) || limit === 0)
    fail("bad-request", 400, { detail: "offset and limit are whole numbers, limit from 1." });
  const page = await directory.list({ offset, limit });
  const next = offset + page.chats.length;
  const body: WireChatList = { chats: page.chats, nextOffset: next < page.total ? next : null, total: page.total };
  return json(context, body);
}

/** The `before` and `limit` query parameters of a page of the chat's active branch. */
function pageParams(context: Context): { readonly before: number; readonly limit: number } {
  const before = intParam(context.url, "before", Number.MAX_SAFE_INTEGER);
  const limit = intParam(context.url, "limit", pageLimit.fallback, pageLimit.max);
  if (Number.isNaN(before) || Number.isNaN(limit) || limit === 0) {
    fail("bad-request", 400, { detail: "before and limit are whole numbers, limit from 1." });
  }
  return { before, limit };
}

/** The page of a snapshot the engine read with `page` (cut out here when the engine gave every message). */
function chatPage(
  snapshot: ChatSnapshot,
  page: { readonly before: number; readonly limit: number },
  activity: ChatActivity,
): WireChatPage {
  const turnSeq = activity.running ? activity.turnSeq : null;
  let messages = snapshot.messages;
  let hasOlder = snapshot.hasOlder;
  if (hasOlder === undefined) {
    // An engine that gives the whole branch: the page is cut out here.
    const older = snapshot.messages.filter((message) => message.seq < page.before);
    messages = older.slice(Math.max(0, older.length - page.limit));
    hasOlder = older.length > messages.length;
  }
  const { hasOlder: _paged, ...chat } = snapshot;
  return {
    snapshot: { ...chat, messages, ...(turnSeq !== null ? { problem: null } : {}) },
    hasOlder,
    cursor: activity.cursor,
    running: activity.running,
  };
}

async function getChat(context: Context, chatId: string): Promise<Response> {
  const { before, limit } = pageParams(context);
  const model = modelParam(context.url);
  await checkModel(context, model);
  // Read first: a turn that starts meanwhile is then replayed from the cursor, never missed.
  const activity = await context.turns.activity(keyOf(context, chatId));
  const engine = await engineOf(context, model);
  // While a turn runs, the page stops before it: its events after the cursor bring it in, each once.
  const turnSeq = activity.running ? activity.turnSeq : null;
  const pageBefore = turnSeq === null ? before : Math.min(before, turnSeq);
  // An engine that reads the log page by page reads only this page (and the chat's state), not the chat.
  const snapshot = await engine.loadChat(chatId, {
    abortSignal: context.request.signal,
    page: { before: pageBefore, limit },
  });
  return json(context, chatPage(snapshot, { before: pageBefore, limit }, activity));
}

/**
 * `POST /chats/{chatId}/branch`: makes the branch through a message active, under the chat's lease (409 while a
 * turn runs), and answers its newest page as `GET /chats/{chatId}` would. An unknown seq is a 404.
 */
async function postBranch(context: Context, chatId: string): Promise<Response> {
  const input = await readJsonBody(context.request, branchRequestSchema, { maxBytes: context.maxBodyBytes });
  const page = pageParams(context);
  await checkModel(context, input.model);
  const key = keyOf(context, chatId);
  // A fold ahead running on the chat belongs to the branch left: the lease below stops it, and the switch goes
  // to its engine, so that the switch comes after the fold's end there.
  const engine = foldAheadFor(context.foldsAhead, key, input.model)?.engine ?? (await engineOf(context, input.model));
  const capability = branchesOf(engine);
  const lease = await context.turns.tryAcquire(key, "branch");
  if (!lease) return fail("busy", 409);
  let snapshot: ChatSnapshot;
  try {
    snapshot = await capability.selectBranch(chatId, input.seq, {
      abortSignal: context.request.signal,
      page: { before: page.before, limit: page.limit },
    });
  } catch (error) {
    if (TurnSequenceError.isInstance(error)) {
      fail("not-found", 404, {
        detail: `This chat has no message at seq ${input.seq}.`,
        ...(error.expectedSeq >= 0 ? { nextSeq: error.expectedSeq } : {}),
      });
    }
    throw error;
  } finally {
    await lease.release();
  }
  return json(context, chatPage(snapshot, page, await context.turns.activity(key)));
}

async function deleteChat(context: Context, chatId: string): Promise<Response> {
  const directory = context.options.chats?.(context.userId);
  if (!directory)
    return fail("method-not-allowed", 405, { detail: "This server keeps no chat list." }, { allow: "GET" });
  const key = keyOf(context, chatId);
  const lease = await context.turns.tryAcquire(key, "delete");
  if (!lease) return fail("busy", 409);
  try {
    const removed = await directory.remove(chatId);
    await context.turns.forget(key);
    if (!removed) return fail("not-found", 404, { detail: "No such chat." });
  } finally {
    await lease.release();
  }
  return new Response(null, { status: 204, headers: { ...context.headers } });
}

async function renameChat(context: Context, chatId: string): Promise<Response> {
  const directory = context.options.chats?.(context.userId);
  if (!directory)
    return fail("method-not-allowed", 405, { detail: "This server keeps no chat list." }, { allow: "GET" });
  const input = await readJsonBody(context.request, renameRequestSchema, { maxBytes: context.maxBodyBytes });
  // A rename needs no lease: a turn running on the chat goes on, and the title is the directory's alone.
  if (!(await directory.rename(chatId, input.title))) return fail("not-found", 404, { detail: "No such chat." });
  const body: WireRenameResponse = { id: chatId, title: chatTitle(input.title) as string };
  return json(context, body);
}

async function getEvents(context: Context, chatId: string): Promise<Response> {
  const after = context.request.headers.get("last-event-id") ?? context.url.searchParams.get("after");
  if (after !== null && !/^[\w.:-]{1,100}$/.test(after)) fail("bad-request", 400, { detail: "Not an event id." });
  const until = context.url.searchParams.get("until");
  if (until !== null && until !== "idle") fail("bad-request", 400, { detail: "until is idle or absent." });
  const release = takePlace(context, "streams");
  const controller = new AbortController();
  context.request.signal.addEventListener("abort", () => controller.abort(), { once: true });
  const key = keyOf(context, chatId);
  const events =
    until === "idle"
      ? untilIdle(context, key, after, controller.signal)
      : context.turns.follow(key, after, controller.signal);
  return eventStreamResponse(events, {
    controller,
    endAtTurnEnd: false,
    redact: context.redact,
    headers: context.headers,
    onClose: release,
  });
}

/**
 * `GET …/events?until=idle`: the chat's events after `after` while something holds it (a turn, a fold on request,
 * a fold ahead of the need, or one this handler's engine is about to plan after a turn), ending once it is idle
 * and every event recorded before that has gone out: a page hears a fold ahead that follows its turn, and holds
 * no connection once there is none.
 */
async function* untilIdle(
  context: Context,
  key: ChatKey,
  after: string | null,
  signal: AbortSignal,
): AsyncGenerator<NumberedEvent> {
  const following = new AbortController();
  const stop = () => following.abort();
  signal.addEventListener("abort", stop, { once: true });
  let last = after !== null && /^\d+$/.test(after) ? Number(after) : -1;
  let end: number | null = null;
  const idle = async (): Promise<number> => {
    await foldAheadFor(context.foldsAhead, key, undefined)?.ended;
    await context.turns.settled(key, following.signal);
    const { cursor } = await context.turns.activity(key);
    return cursor === null ? -1 : Number(cursor);
  };
  idle().then((cursor) => {
    end = cursor;
    if (cursor <= last) stop();
  }, stop);
  try {
    for await (const numbered of context.turns.follow(key, after, following.signal)) {
      yield numbered;
      last = Number(numbered.id);
      if (end !== null && last >= end) return;
    }
  } finally {
    signal.removeEventListener("abort", stop);
    stop();
  }
}

async function postAbort(context: Context, chatId: string): Promise<Response> {
  await readJsonBody(context.request, emptyRequestSchema, { maxBytes: context.maxBodyBytes, emptyAllowed: true });
  const key = keyOf(context, chatId);
  const aborted = await context.turns.requestAbort(key);
  // Answer once the turn has ended (with its `turn-end`), or after 10 s at most.
  if (aborted) await context.turns.settled(key, AbortSignal.timeout(10_000)).catch(() => undefined);
  const body: WireAbortResponse = { aborted };
  return json(context, body);
}

async function postCompact(context: Context, chatId: string): Promise<Response> {
  const input = await readJsonBody(context.request, compactRequestSchema, {
    maxBytes: context.maxBodyBytes,
    emptyAllowed: true,
  });
  await checkModel(context, input.model);
  const engine = await engineOf(context, input.model);
  const capability = contextOf(engine);
  const wait = context.limits.retryAfter(context.userId, { tokensOnly: true });
  if (wait > 0) fail("rate-limited", 429, { retryAfter: wait }, { "retry-after": String(wait) });
  const key = keyOf(context, chatId);
  // A fold waits for a running turn to end, then holds the chat as a turn would.
  const lease = await context.turns.acquire(key, "compact", context.request.signal);
  const events: EngineEvent[] = [];
  // Kept for GET /events from the fold's `compacting` on: a fold that never starts (nothing to fold, a chat nobody
  // wrote) changes nothing and keeps nothing; its `compaction-skipped` is in this answer only.
  let folding = false;
  const unsubscribe = engine.subscribe((event) => {
    if (event.chatId !== chatId) return;
    events.push(event);
    if (event.type === "compacting") folding = true;
    if (folding) void lease.record(event).catch(() => undefined);
  });
  try {
    const result = await capability.compact(chatId, {
      ...(input.keep !== undefined ? { keep: input.keep } : {}),
      abortSignal: lease.abortSignal,
    });
    const body: WireCompactResponse = { result, events };
    return json(context, body);
  } finally {
    unsubscribe();
    await lease.release();
  }
}

async function getUsage(context: Context, chatId: string): Promise<Response> {
  const model = modelParam(context.url);
  await checkModel(context, model);
  const engine = await engineOf(context, model);
  return json(context, await contextOf(engine).usage(chatId));
}
