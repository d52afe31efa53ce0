// The engine on a small Node server: the wire-protocol handler at /api/engine and the built page. The
// provider's key, the chats and the summariser stay here; the page only ever talks to this server.
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { extname, join } from "node:path";
import { createApiEngine, createProvider, type ModelInfo, type ProviderAdapter } from "@conch/engine-client";
import { createFileChatDirectory, createFileChatStore } from "@conch/engine-client/node";
import { createEngineHandler } from "@conch/engine-client/server";
import { toNodeHandler } from "srvx/node";
import { staticMiddleware } from "srvx/static";

export interface ChatServerOptions {
  readonly provider: ProviderAdapter;
  readonly model: string;
  /** Where the chats live (one person here; an app keeps a folder per signed-in person). */
  readonly dataDir: string;
  /** The built page (`vite build`'s dist). */
  readonly pageDir: string;
  /** The provider's key, so that it never leaves in a response (even echoed in a provider's error). */
  readonly apiKey?: string;
  /**
   * Fold ahead of the need, in the background after a turn (the engine's `foldAhead`). Default true; the
   * repository's versions test turns it off, so that its chat folds at the turns a replay of it folds at.
   */
  readonly foldAhead?: boolean;
}

/**
 * The built page: its files through srvx's static middleware; any other path without an extension is the page
 * itself (a reload of a deep link).
 */
function servePage(pageDir: string): (request: Request) => Promise<Response> {
  const files = staticMiddleware({ dir: pageDir });
  return async (request) =>
    files(request as never, async () =>
      extname(new URL(request.url).pathname)
        ? new Response("Not found", { status: 404 })
        : new Response(await readFile(join(pageDir, "index.html")), {
            headers: { "content-type": "text/html; charset=utf-8" },
          }),
    );
}

export function createChatServer(options: ChatServerOptions): Server {
  const store = createFileChatStore({ root: options.dataDir });
  let models: Promise<readonly ModelInfo[]> | null = null;
  const listModels = () => {
    models ??= options.provider.listModels({ timeoutMs: 20_000 }).catch(() => []);
    return models;
  };
  const engine = createEngineHandler({
    basePath: "/api/engine",
    engineFor: async (_userId, request) =>
      createApiEngine({
        provider: options.provider,
        model: request.model ?? options.model,
        store,
        models: await listModels(),
        ...(options.foldAhead === undefined ? {} : { foldAhead: options.foldAhead }),
      }),
    // One person on this computer; an app checks its session here and returns null to refuse.
    authorize: () => ({ userId: "me" }),
    listModels,
    chats: () => createFileChatDirectory(store),
    ...(options.apiKey ? { secrets: [options.apiKey] } : {}),
  });
  const page = servePage(options.pageDir);
  return createServer(
    toNodeHandler((request: Request) => {
      const { pathname } = new URL(request.url);
      return pathname.startsWith("/api/engine/") ? engine(request) : page(request);
    }) as never,
  );
}

/** The provider, model and key named by OPENAI_BASE_URL, OPENAI_API_KEY, MODEL and SUMMARY_MODEL. */
export function providerFromEnv(env: Readonly<Record<string, string | undefined>>): {
  readonly provider: ProviderAdapter;
  readonly model: string;
  readonly apiKey?: string;
} {
  const apiKey = env.OPENAI_API_KEY;
  return {
    provider: createProvider("openai", {
      ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
      ...(apiKey ? { apiKey } : {}),
      local: false,
      ...(env.SUMMARY_MODEL ? { cheapestModel: env.SUMMARY_MODEL } : {}),
    }),
    model: env.MODEL ?? "gpt-5",
    ...(apiKey ? { apiKey } : {}),
  };
}

// OPENAI_BASE_URL=… OPENAI_API_KEY=… MODEL=… npm start (after npm run build)
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = createChatServer({
    ...providerFromEnv(process.env),
    dataDir: process.env.DATA_DIR ?? ".chats",
    pageDir: join(import.meta.dirname, "dist"),
  });
  const port = Number(process.env.PORT ?? 3000);
  server.listen(port, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${port}`));
}
