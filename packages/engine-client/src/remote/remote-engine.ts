import { createChannel } from "../channel.js";
import type {
  ChatSnapshot,
  CompactOptions,
  CompactResult,
  ContextCapability,
  ContextUsage,
  Engine,
  EngineListener,
  TurnInput,
  TurnStream,
} from "../engine.js";
import {
  assertSafeChatId,
  ChatBusyError,
  defaultErrorHandler,
  type ErrorHandler,
  RemoteEngineError,
} from "../errors.js";
import type { EngineEvent, EngineEventOf } from "../events.js";
import { reduceChat } from "../kit/reduce-chat.js";
import type { ModelInfo } from "../messages.js";
import { chatPath, createRemoteHttp, type HeadersOption, problemError, type RemoteHttp } from "./http.js";
import { type LiveTurn, readTurn } from "./live-turn.js";
import type {
  WireCapabilities,
  WireChatList,
  WireChatPage,
  WireCompactResponse,
  WireModels,
  WireTurnRequest,
} from "./wire.js";

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
   * Whether this engine reads a turn of the chat now: its own, or one a `loadChat` found running on the server
   * (a reload mid-answer), whose events reach `subscribe` listeners until its `turn-end`.
   */
  isAnswering(chatId: string): boolean;
}

const pageSize = 1_000;

/**
 * Connects to an engine handler: reads `/capabilities` first, so that the engine declares `context` exactly when
 * the server's does. Browser and Node.
 */
export async function createRemoteEngine(options: RemoteEngineOptions): Promise<RemoteEngine> {
  const http = createRemoteHttp(options.baseURL, options.fetch ?? globalThis.fetch.bind(globalThis), options.headers);
  const capabilities = await http.getJson<WireCapabilities>("/capabilities");
  if (capabilities.protocol !== 1) {
    throw new RemoteEngineError({
      status: 0,
      problem: null,
      message: `The server speaks protocol ${capabilities.protocol}, this client 1`,
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
  const listeners = new Set<EngineListener>();
  /** Turns being read now, by chat: this engine's own and those found running at a load. */
  const live = new Map<string, LiveTurn>();
  const modelQuery = model !== undefined ? `model=${encodeURIComponent(model)}` : "";
  const withModel = (path: string) => (modelQuery ? `${path}${path.includes("?") ? "&" : "?"}${modelQuery}` : path);

  function emit(event: EngineEvent): void {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (error) {
        // One listener's bug must not stop the others or the turn.
        onError(error, { during: "listener" });
      }
    }
  }

  /** Reads a turn to its end; the chat counts as busy here meanwhile. */
  async function track(
    chatId: string,
    first: Response | null,
    liveTurn: LiveTurn,
    send: (event: EngineEvent) => void,
  ): Promise<EngineEventOf<"turn-end">> {
    live.set(chatId, liveTurn);
    try {
      return await readTurn(http, chatId, liveTurn, first, send);
    } finally {
      if (live.get(chatId) === liveTurn) live.delete(chatId);
    }
  }

  async function runTurn(input: TurnInput, send: (event: EngineEvent) => void): Promise<EngineEventOf<"turn-end">> {
    const { chatId, abortSignal, ...fields } = input;
    assertSafeChatId(chatId);
    if (live.has(chatId)) throw new ChatBusyError(chatId);
    const liveTurn: LiveTurn = { lastId: null, events: [] };
    live.set(chatId, liveTurn);
    let started = false;
    const stop = () => {
      if (started) void http.request(chatPath(chatId, "/abort"), { method: "POST" }).catch(() => undefined);
    };
    abortSignal?.addEventListener("abort", stop, { once: true });
    try {
      const body: WireTurnRequest = { ...fields, ...(model !== undefined ? { model } : {}) };
      const response = await http.request(chatPath(chatId, "/turns"), { body });
      if (!response.ok) throw await problemError(response, input);
      started = true;
      // Aborted while the request was on its way: the server has the turn now, so it can be stopped.
      if (abortSignal?.aborted) stop();
      return await track(chatId, response, liveTurn, send);
    } finally {
      abortSignal?.removeEventListener("abort", stop);
      if (live.get(chatId) === liveTurn) live.delete(chatId);
    }
  }

  async function loadPages(chatId: string, signal: AbortSignal | undefined): Promise<WireChatPage> {
    const first = await http.getJson<WireChatPage>(withModel(chatPath(chatId, `?limit=${pageSize}`)));
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
      const stop = () => void http.request(chatPath(chatId, "/abort"), { method: "POST" }).catch(() => undefined);
      options?.abortSignal?.addEventListener("abort", stop, { once: true });
      try {
        const answer = await http.getJson<WireCompactResponse>(chatPath(chatId, "/compact"), {
          body: {
            ...(options?.keep !== undefined ? { keep: options.keep } : {}),
            ...(model !== undefined ? { model } : {}),
          },
        });
        for (const event of answer.events) emit(event);
        return answer.result;
      } finally {
        options?.abortSignal?.removeEventListener("abort", stop);
      }
    },
    usage(chatId: string): Promise<ContextUsage> {
      assertSafeChatId(chatId);
      return http.getJson<ContextUsage>(withModel(chatPath(chatId, "/usage")));
    },
  };

  const engine: RemoteEngine = {
    specificationVersion: "v1",
    id: capabilities.engine.id,
    displayName: capabilities.engine.displayName,
    capabilities: capabilities.context ? { context } : {},
    model,

    isAnswering: (chatId) => live.has(chatId),

    async loadChat(chatId, options): Promise<ChatSnapshot> {
      assertSafeChatId(chatId);
      const page = await loadPages(chatId, options?.abortSignal);
      const cursor = page.cursor === null ? -1 : Number(page.cursor);
      const reading = live.get(chatId);
      if (reading) {
        // Events already read since the snapshot's cursor are not in it: fold them in, as listeners saw them.
        return reading.events
          .filter((numbered) => numbered.id > cursor)
          .reduce((chat, numbered) => reduceChat(chat, numbered.event), page.snapshot);
      }
      if (page.running) {
        // A turn runs (a reload mid-answer): read the rest of it, from the cursor, for the listeners.
        const liveTurn: LiveTurn = { lastId: page.cursor, events: [] };
        void track(chatId, null, liveTurn, emit).catch(() => undefined);
      }
      return page.snapshot;
    },

    sendTurn(input): TurnStream {
      const channel = createChannel<EngineEvent>();
      const done = runTurn(input, (event) => {
        channel.push(event);
        emit(event);
      }).finally(() => channel.close());
      done.catch(() => undefined);
      return {
        done,
        [Symbol.asyncIterator]: () => {
          const iterator = channel[Symbol.asyncIterator]();
          return {
            async next() {
              const result = await iterator.next();
              // A turn the server refused (a stale seq, a busy chat) rejects the reader too.
              if (result.done) await done;
              return result;
            },
            return: () => iterator.return?.() ?? Promise.resolve({ value: undefined, done: true }),
          };
        },
      };
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    async listModels() {
      return (await http.getJson<WireModels>("/models")).models;
    },
    withModel(next) {
      return remoteEngine(http, capabilities, next, onError);
    },
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
