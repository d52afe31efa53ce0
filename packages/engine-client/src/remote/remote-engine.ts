import type {
  BranchCapability,
  ChatSnapshot,
  CompactOptions,
  CompactResult,
  ContextCapability,
  ContextUsage,
  Engine,
} from "../engine.js";
import {
  assertSafeChatId,
  ChatBusyError,
  defaultErrorHandler,
  type ErrorHandler,
  RemoteEngineError,
  TurnSequenceError,
} from "../errors.js";
import type { EngineEvent, EngineEventOf } from "../events.js";
import { createFanOut } from "../kit/fan-out.js";
import { reduceChat } from "../kit/reduce-chat.js";
import { createTurnRunner, type Turn } from "../kit/turn-runner.js";
import type { ModelInfo } from "../messages.js";
import {
  protocolVersion,
  type WireBranchRequest,
  type WireCapabilities,
  type WireChatList,
  type WireChatPage,
  type WireCompactResponse,
  type WireModels,
  type WireTurnRequest,
} from "../protocol/wire.js";
import { type ChatDirectory, checkedTitle } from "../transcript/chat-directory.js";
import { chatPath, createRemoteHttp, type HeadersOption, problemError, type RemoteHttp } from "./http.js";
import { followFoldAhead, type LiveTurn, readTurn } from "./live-turn.js";

/** Options of {@link createRemoteEngine}. */
export interface RemoteEngineOptions {
  /** Where the server's handler is mounted: `/api/engine` in a page, a full URL elsewhere. */
  readonly baseURL: string;
  /** Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
  /** Sent with every request (`Authorization: Bearer …`); a function is asked each time. */
  readonly headers?: HeadersOption;
  /** The model the chats talk to. Default: the server's choice. */
  readonly model?: string;
  /** Told when a listener throws (the others and the turn go on). Default: `defaultErrorHandler`, which logs it. */
  readonly onError?: ErrorHandler;
}

/** An {@link Engine} that runs on a server, over the protocol of docs/protocol.md. */
export interface RemoteEngine extends Engine {
  /** The model this engine asks for, if any. */
  readonly model: string | undefined;
  /** The models the server offers, with their windows. */
  listModels(): Promise<readonly ModelInfo[]>;
  /** The same server with another model (a too-long card's "Switch to …"); no request is made. */
  withModel(model: string): RemoteEngine;
  /** The person's chats, newest first. */
  listChats(page?: { readonly offset?: number; readonly limit?: number }): Promise<WireChatList>;
  /** Removes a chat whole. */
  deleteChat(chatId: string): Promise<void>;
  /**
   * The person's chats on the server as a {@link ChatDirectory} (`GET /chats`, `PATCH` and `DELETE /chats/{id}`),
   * for a chat list beside this engine.
   */
  readonly directory: ChatDirectory;
  /**
   * Whether this engine reads a turn of the chat now: its own, or one a `loadChat` found running on the server
   * (a reload mid-answer), whose events reach `subscribe` listeners until its `turn-end`.
   */
  isAnswering(chatId: string): boolean;
  /**
   * Stops following the folds ahead of the need this engine hears between turns (closes those connections); turns
   * and everything else go on working.
   */
  dispose(): void;
}

const pageSize = 1_000;

/**
 * Connects to an engine handler: reads `/capabilities` first, so that the engine declares `context` exactly when
 * the server's does. Browser and Node.
 */
export async function createRemoteEngine(options: RemoteEngineOptions): Promise<RemoteEngine> {
  const http = createRemoteHttp(options.baseURL, options.fetch ?? globalThis.fetch.bind(globalThis), options.headers);
  const capabilities = await http.getJson<WireCapabilities>("/capabilities");
  if (capabilities.protocol !== protocolVersion) {
    throw new RemoteEngineError({
      status: 0,
      problem: null,
      message: `The server speaks protocol ${capabilities.protocol}, this client ${protocolVersion}`,
    });
  }
  return remoteEngine(http, capabilities, options.model, options.onError ?? defaultErrorHandler);
}

function remoteEngine(
  http: RemoteHttp,
  capabilities: WireCapabilities,
  model: string | undefined,
  onError: ErrorHandler,
): RemoteEngine {
  // On the engine kit like every engine: the kit's fan-out, busy check, per-chat queue and turn stream.
  const events = createFanOut<EngineEvent>(onError);
  const runner = createTurnRunner({ emit: events.emit });
  /** Turns being read from the server now, by chat: where a resume starts, and what a load meanwhile replays. */
  const reading = new Map<string, LiveTurn>();
  const modelQuery = model !== undefined ? `model=${encodeURIComponent(model)}` : "";
  const withModel = (path: string) => (modelQuery ? `${path}${path.includes("?") ? "&" : "?"}${modelQuery}` : path);
  /** Folds ahead followed after a turn, by chat (see `followAfterTurn`). */
  const followedFolds = new Map<string, AbortController>();
  let listeners = 0;

  function stopFollowing(chatId?: string): void {
    for (const [followed, controller] of followedFolds) {
      if (chatId === undefined || followed === chatId) controller.abort();
    }
  }

  /**
   * After a turn read to its end: a fold ahead of the need the server begins after it is heard live (its
   * `compacting`, then `compacted`), so that a divider shows with no new turn. Only while something listens, one
   * connection a chat, ended by the server once the chat is idle, by this engine's next turn of the chat, or when
   * the last listener goes.
   */
  function followAfterTurn(chatId: string, lastId: string | null): void {
    if (capabilities.eventsUntilIdle !== true || listeners === 0 || lastId === null || followedFolds.has(chatId))
      return;
    const controller = new AbortController();
    followedFolds.set(chatId, controller);
    followFoldAhead(http, chatId, lastId, controller.signal, events.emit)
      // A broken follow loses nothing: the fold shows at the chat's next turn or load, as on an older server.
      .catch(() => undefined)
      .finally(() => {
        if (followedFolds.get(chatId) === controller) followedFolds.delete(chatId);
      });
  }

  /** Reads a turn from the server to its end: from `first`, or from the event after `lastId`. */
  async function read(
    chatId: string,
    lastId: string | null,
    first: Response | null,
    send: (event: EngineEvent) => void,
  ): Promise<EngineEventOf<"turn-end">> {
    const liveTurn: LiveTurn = { lastId, events: [] };
    reading.set(chatId, liveTurn);
    try {
      const ended = await readTurn(http, chatId, liveTurn, first, send);
      if (ended.status === "done") followAfterTurn(chatId, liveTurn.lastId);
      return ended;
    } finally {
      // The runner lets one turn of a chat run at a time: this read is the chat's only one.
      reading.delete(chatId);
    }
  }

  /** The turn body: the server runs the turn; a refusal (a stale seq, a busy chat there) rejects it. */
  async function runTurn(turn: Turn): Promise<EngineEventOf<"turn-end">> {
    // `foldAheadAfter` is this process's: the server has its own.
    const { chatId, abortSignal, foldAheadAfter, ...fields } = turn.input;
    // This turn's stream carries a fold ahead still running from here on.
    stopFollowing(chatId);
    let started = false;
    const stop = () => {
      if (started) void http.request(chatPath(chatId, "/abort"), { method: "POST" }).catch(() => undefined);
    };
    abortSignal?.addEventListener("abort", stop, { once: true });
    try {
      const body: WireTurnRequest = { ...fields, ...(model !== undefined ? { model } : {}) };
      const response = await http.request(chatPath(chatId, "/turns"), { body });
      if (!response.ok) throw await problemError(response, turn.input);
      started = true;
      // Aborted while the request was on its way: the server has the turn now, so it can be stopped.
      if (abortSignal?.aborted) stop();
      return await read(chatId, null, response, turn.send);
    } finally {
      abortSignal?.removeEventListener("abort", stop);
    }
  }

  /** The chat's active branch whole: `first` (its newest page), then the older pages before it. */
  async function loadPages(
    chatId: string,
    signal: AbortSignal | undefined,
    newest?: WireChatPage,
  ): Promise<WireChatPage> {
    const first = newest ?? (await http.getJson<WireChatPage>(withModel(chatPath(chatId, `?limit=${pageSize}`))));
    let messages = first.snapshot.messages;
    let hasOlder = first.hasOlder;
    while (hasOlder && messages.length > 0 && !signal?.aborted) {
      const page = await http.getJson<WireChatPage>(
        withModel(chatPath(chatId, `?before=${messages[0]?.seq}&limit=${pageSize}`)),
      );
      messages = [...page.snapshot.messages, ...messages];
      hasOlder = page.hasOlder && page.snapshot.messages.length > 0;
    }
    return { ...first, snapshot: { ...first.snapshot, messages } };
  }

  const context: ContextCapability = {
    async compact(chatId: string, options?: CompactOptions): Promise<CompactResult> {
      assertSafeChatId(chatId);
      const signal = options?.abortSignal;
      // In the chat's queue, as on every engine: a fold asked for during this engine's turn goes after it.
      return runner.queued(chatId, async () => {
        // Stopped while it waited: it never reached the server (an abort there would stop whatever runs).
        if (signal?.aborted) return { status: "aborted" };
        const stop = () => void http.request(chatPath(chatId, "/abort"), { method: "POST" }).catch(() => undefined);
        signal?.addEventListener("abort", stop, { once: true });
        try {
          const answer = await http.getJson<WireCompactResponse>(chatPath(chatId, "/compact"), {
            body: {
              ...(options?.keep !== undefined ? { keep: options.keep } : {}),
              ...(model !== undefined ? { model } : {}),
            },
          });
          for (const event of answer.events) events.emit(event);
          return answer.result;
        } finally {
          signal?.removeEventListener("abort", stop);
        }
      });
    },
    usage(chatId: string): Promise<ContextUsage> {
      assertSafeChatId(chatId);
      return http.getJson<ContextUsage>(withModel(chatPath(chatId, "/usage")));
    },
  };

  const branches: BranchCapability = {
    async selectBranch(chatId, seq, options): Promise<ChatSnapshot> {
      assertSafeChatId(chatId);
      // This engine's own turn of the chat is still being read: the server would refuse the switch as well.
      if (runner.isBusy(chatId)) throw new ChatBusyError(chatId);
      const page = options?.page;
      const query = page
        ? `?limit=${page.limit}${page.before !== undefined ? `&before=${page.before}` : ""}`
        : `?limit=${pageSize}`;
      const body: WireBranchRequest = { seq, ...(model !== undefined ? { model } : {}) };
      const response = await http.request(chatPath(chatId, `/branch${query}`), { body });
      if (!response.ok) throw await branchRefusal(response, chatId, seq);
      const newest = (await response.json()) as WireChatPage;
      if (page) return { ...newest.snapshot, hasOlder: newest.hasOlder };
      return (await loadPages(chatId, options?.abortSignal, newest)).snapshot;
    },
  };

  const engine: RemoteEngine = {
    specificationVersion: "v1",
    id: capabilities.engine.id,
    displayName: capabilities.engine.displayName,
    capabilities: {
      ...(capabilities.context ? { context } : {}),
      ...(capabilities.branches === true ? { branches } : {}),
    },
    model,

    isAnswering: (chatId) => runner.isBusy(chatId),

    async loadChat(chatId, options): Promise<ChatSnapshot> {
      assertSafeChatId(chatId);
      const page = await loadPages(chatId, options?.abortSignal);
      if (runner.isBusy(chatId)) {
        // Events already read since the snapshot's cursor are not in it: fold them in, as listeners saw them.
        const cursor = page.cursor === null ? -1 : Number(page.cursor);
        return (reading.get(chatId)?.events ?? [])
          .filter((numbered) => numbered.id > cursor)
          .reduce((chat, numbered) => reduceChat(chat, numbered.event), page.snapshot);
      }
      if (page.running) {
        // A turn runs (a reload mid-answer): read the rest of it, from the cursor, for the listeners.
        runner.follow(chatId, (send) => read(chatId, page.cursor, null, send))?.catch(() => undefined);
      }
      return page.snapshot;
    },

    sendTurn: (input) => runner.start(input, runTurn),
    subscribe(listener) {
      listeners += 1;
      const unsubscribe = events.subscribe(listener);
      let subscribed = true;
      return () => {
        if (!subscribed) return;
        subscribed = false;
        listeners -= 1;
        unsubscribe();
        // Nobody listens any more: no connection is held for folds nobody would see.
        if (listeners === 0) stopFollowing();
      };
    },
    dispose: () => stopFollowing(),

    async listModels() {
      return (await http.getJson<WireModels>("/models")).models;
    },
    withModel(next) {
      return remoteEngine(http, capabilities, next, onError);
    },
    directory: remoteDirectory(http),
    listChats(page) {
      const query = `?offset=${page?.offset ?? 0}&limit=${page?.limit ?? 50}`;
      return http.getJson<WireChatList>(`/chats${query}`);
    },
    async deleteChat(chatId) {
      assertSafeChatId(chatId);
      const response = await http.request(chatPath(chatId), { method: "DELETE" });
      if (!response.ok) throw await problemError(response);
    },
  };
  return engine;
}

/** A refused branch switch as the engine's own errors: an unknown seq, a turn running on the chat. */
async function branchRefusal(response: Response, chatId: string, seq: number): Promise<Error> {
  const error = await problemError(response, { chatId, seq });
  if (RemoteEngineError.isInstance(error) && error.problem?.type === "urn:conch:problem:not-found") {
    return new TurnSequenceError({ chatId, expectedSeq: error.problem.nextSeq ?? -1, actualSeq: seq });
  }
  return error;
}

/** The server's chat list over HTTP: a 404 for a chat is "no such chat" (false), any other refusal an error. */
function remoteDirectory(http: RemoteHttp): ChatDirectory {
  return {
    async list({ offset, limit }) {
      const page = await http.getJson<WireChatList>(`/chats?offset=${offset}&limit=${limit}`);
      // A server that does not send `total`: as many as are known, and one more while there is a next page.
      const known = offset + page.chats.length + (page.nextOffset === null ? 0 : 1);
      return { chats: page.chats, total: page.total ?? known };
    },
    async rename(chatId, title) {
      assertSafeChatId(chatId);
      const kept = checkedTitle(chatId, title);
      const response = await http.request(chatPath(chatId), { method: "PATCH", body: { title: kept } });
      if (response.status === 404) return false;
      if (!response.ok) throw await problemError(response);
      return true;
    },
    async remove(chatId) {
      assertSafeChatId(chatId);
      const response = await http.request(chatPath(chatId), { method: "DELETE" });
      if (response.status === 404) return false;
      if (!response.ok) throw await problemError(response);
      return true;
    },
  };
}
