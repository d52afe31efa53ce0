// The engine behind one fetch handler, as an app would set it up: the provider's key, the chats and the
// summariser stay on the server; each signed-in person gets their own folder of chats.
import { join } from "node:path";
import { createApiEngine, type ProviderAdapter } from "@conch/engine-client";
import { createFileChatDirectory, createFileChatStore, type FileChatStore } from "@conch/engine-client/node";
import { createEngineHandler, type EngineHandler } from "@conch/engine-client/server";

export interface ExampleOptions {
  readonly provider: ProviderAdapter;
  readonly model: string;
  /** Where chats live: `<dataDir>/<userId>/`. */
  readonly dataDir: string;
  /** Who is signed in: your session check. Here: a Bearer token → the person. */
  readonly people: ReadonlyMap<string, string>;
  /** The provider's key, so that it never leaves in a response (even echoed in a provider's error). */
  readonly apiKey?: string;
}

export function createExampleHandler(options: ExampleOptions): EngineHandler {
  const stores = new Map<string, FileChatStore>();
  const storeOf = (userId: string) => {
    let store = stores.get(userId);
    if (!store) {
      store = createFileChatStore({ root: join(options.dataDir, userId) });
      stores.set(userId, store);
    }
    return store;
  };
  return createEngineHandler({
    basePath: "/api/engine",
    engineFor: (userId, request) =>
      createApiEngine({ provider: options.provider, model: request.model ?? options.model, store: storeOf(userId) }),
    authorize: (request) => {
      const token = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
      const userId = token ? options.people.get(token) : undefined;
      return userId ? { userId } : null;
    },
    chats: (userId) => createFileChatDirectory(storeOf(userId)),
    limits: { turnsPerMinute: 20, inputTokensPerDay: 2_000_000 },
    ...(options.apiKey ? { secrets: [options.apiKey] } : {}),
  });
}
