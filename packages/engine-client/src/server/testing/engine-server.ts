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
import { createApiEngine } from "../../api-engine/api-engine.js";
import type { ModelInfo } from "../../messages.js";
import { createProvider } from "../../providers/create-provider.js";
import { createFileChatStore, type FileChatStore } from "../../transcript/file-store.node.js";
import { createFileChatDirectory } from "../file-chat-directory.node.js";
import { createEngineHandler } from "../handler.js";
import type { EngineHandlerOptions } from "../options.js";

export const testApiKey = "sk-test-0123456789-secret-provider-key";
export const tokens: Readonly<Record<string, string>> = { "token-alice": "alice", "token-bob": "bob" };

export interface EngineServerOptions {
  readonly models?: readonly FakeModel[];
  readonly model?: string;
  readonly chunkDelayMs?: number;
  readonly handler?: Partial<EngineHandlerOptions>;
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
  const handler = createEngineHandler({
    basePath: "/api/engine",
    engineFor: (userId, { model }) =>
      createApiEngine({
        provider,
        model: model ?? options.model ?? "chat",
        store: storeOf(userId),
        models,
        systemPrompt: "You are a helpful assistant in a long chat.",
        id: "api",
        displayName: "OpenRouter (fake)",
      }),
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
  const origin = new URL(server.url as string).origin;
  return {
    baseURL: `${origin}/api/engine`,
    origin,
    fake,
    script,
    models,
    providerClosedEarly: () => proxy.closedEarly,
    storeOf,
    async close() {
      await server.close(true);
      await proxy.close();
      await fake.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/**
 * A pass-through HTTP proxy in front of the fake provider that counts requests whose client (the engine) closed
 * the connection before the answer had ended: what a provider sees of a cancelled request.
 */
async function startProviderProxy(target: string) {
  let closedEarly = 0;
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
