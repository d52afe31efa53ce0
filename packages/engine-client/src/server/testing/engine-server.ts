// A real engine server for tests: the API engine over the fake provider on loopback, behind the handler,
// listening on a free port on 127.0.0.1 (srvx), each person with their own store.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createReplayScript,
  type FakeModel,
  type FakeProvider,
  type ReplayScript,
  startFakeProvider,
} from "@conch/fake-provider";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { serve } from "srvx";
import { type ApiEngine, type ApiEngineOptions, createApiEngine } from "../../api-engine/api-engine.js";
import type { ModelInfo } from "../../messages.js";
import { createProvider } from "../../providers/create-provider.js";
import type { ChatStore } from "../../transcript/chat-store.js";
import { createFileChatDirectory } from "../../transcript/file-chat-directory.node.js";
import { createFileChatStore, type FileChatStore } from "../../transcript/file-store.node.js";
import { createEngineHandler } from "../handler.js";
import type { EngineHandlerOptions } from "../options.js";

export const testApiKey = "sk-test-0123456789-secret-provider-key";
export const tokens: Readonly<Record<string, string>> = { "token-alice": "alice", "token-bob": "bob" };

export interface EngineServerOptions {
  readonly models?: readonly FakeModel[];
  readonly model?: string;
  readonly chunkDelayMs?: number;
  readonly handler?: Partial<EngineHandlerOptions>;
  /** More options of the server's engines (and of `makeEngine`'s). */
  readonly engine?: Partial<ApiEngineOptions>;
}

export interface EngineServer {
  /** Where the handler answers: `http://127.0.0.1:PORT/api/engine`. */
  readonly baseURL: string;
  readonly origin: string;
  readonly fake: FakeProvider;
  readonly script: ReplayScript;
  readonly models: readonly ModelInfo[];
  /** Provider requests whose connection the engine closed before the answer was complete. */
  readonly providerClosedEarly: () => number;
  /** An API engine configured as the server's, over `store`. */
  makeEngine(store: ChatStore, model?: string): ApiEngine;
  /** Drops the connection of the next event stream a client opens after `afterBytes` bytes of its body. */
  cutNextStream(afterBytes: number): void;
  /** How many streams were dropped so. */
  streamsCut(): number;
  storeOf(userId: string): FileChatStore;
  close(): Promise<void>;
}

export const defaultModels: readonly FakeModel[] = [
  { id: "chat", window: 64_000, displayName: "Chat" },
  { id: "cheap", window: 128_000, displayName: "Cheap Summariser" },
];

/** Bearer tokens of {@link tokens}: alice and bob. */
export function bearer(userId: "alice" | "bob"): Record<string, string> {
  const token = Object.entries(tokens).find(([, user]) => user === userId)?.[0] as string;
  return { authorization: `Bearer ${token}` };
}

export async function startEngineServer(options: EngineServerOptions = {}): Promise<EngineServer> {
  const script = createReplayScript(["cheap"]);
  const fake = await startFakeProvider({
    dialect: "openai",
    row: "openrouter",
    models: options.models ?? defaultModels,
    countTokens: (text) => countTokens(text),
    reply: script.reply,
    apiKey: testApiKey,
    ...(options.chunkDelayMs ? { chunkDelayMs: options.chunkDelayMs } : {}),
  });
  const proxy = await startProviderProxy(fake.origin);
  const provider = createProvider("openrouter", {
    baseURL: `${proxy.origin}${new URL(fake.baseURL).pathname}`,
    apiKey: testApiKey,
    local: false,
    cheapestModel: "cheap",
  });
  const models = await provider.listModels();
  const folder = await mkdtemp(join(tmpdir(), "engine-server-"));
  const stores = new Map<string, FileChatStore>();
  const storeOf = (userId: string): FileChatStore => {
    let store = stores.get(userId);
    if (!store) {
      store = createFileChatStore({ root: join(folder, userId) });
      stores.set(userId, store);
    }
    return store;
  };
  /** The engine the server runs; the same one in-process is the reference the remote engine is compared with. */
  const makeEngine = (store: ChatStore, model?: string): ApiEngine =>
    createApiEngine({
      provider,
      model: model ?? options.model ?? "chat",
      store,
      models,
      systemPrompt: "You are a helpful assistant in a long chat.",
      id: "api",
      displayName: "OpenRouter (fake)",
      ...options.engine,
    });
  const handler = createEngineHandler({
    basePath: "/api/engine",
    engineFor: (userId, { model }) => makeEngine(storeOf(userId), model),
    authorize: (request) => {
      const match = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "");
      const userId = match ? tokens[match[1] as string] : undefined;
      return userId ? { userId } : null;
    },
    listModels: async () => models,
    chats: (userId) => createFileChatDirectory(storeOf(userId)),
    secrets: [testApiKey],
    onError: () => undefined,
    ...options.handler,
  });
  const server = serve({ fetch: handler, port: 0, hostname: "127.0.0.1", silent: true, gracefulShutdown: false });
  await server.ready();
  const direct = new URL(server.url as string).origin;
  // Clients reach the server through a cutting proxy, so that a test can drop a connection mid-answer.
  const cutter = await startProxy(direct);
  const origin = cutter.origin;
  return {
    baseURL: `${origin}/api/engine`,
    origin,
    fake,
    script,
    models,
    providerClosedEarly: () => proxy.closedEarly,
    makeEngine,
    cutNextStream: (afterBytes) => cutter.cutNext(afterBytes),
    streamsCut: () => cutter.cuts,
    storeOf,
    async close() {
      await cutter.close();
      await server.close(true);
      await proxy.close();
      await fake.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/** A pass-through HTTP proxy in front of the fake provider: it counts what a provider sees of a cancelled request. */
function startProviderProxy(target: string) {
  return startProxy(target);
}

/**
 * A pass-through HTTP proxy that counts requests whose client closed the connection before the answer had ended,
 * and can drop the next event stream part-way, as a flaky network would.
 */
async function startProxy(target: string) {
  let closedEarly = 0;
  let cutAfter: number | null = null;
  let cuts = 0;
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const streaming = String(answer.headers["content-type"] ?? "").startsWith("text/event-stream");
        if (streaming && cutAfter !== null) {
          let budget = cutAfter;
          cutAfter = null;
          answer.on("data", (chunk: Buffer) => {
            if (budget <= 0) return;
            res.write(chunk.subarray(0, budget));
            budget -= chunk.length;
            if (budget <= 0) {
              cuts += 1;
              answer.destroy();
              res.destroy();
            }
          });
          return;
        }
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
    res.on("close", () => {
      if (!res.writableFinished) {
        closedEarly += 1;
        upstream.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    get closedEarly() {
      return closedEarly;
    },
    get cuts() {
      return cuts;
    },
    cutNext(afterBytes: number) {
      cutAfter = afterBytes;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
