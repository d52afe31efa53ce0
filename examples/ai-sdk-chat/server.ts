// The ai-sdk-chat example's server: useChat's route (`createNacreChatRoute` on the API engine), the wire
// protocol's handler beside it, and the page: built (`npm run build`, then `npm start`), or from source through
// Vite when no built page is given (the repository's e2e test). The provider's key, the chats and the summariser
// stay here; the page only ever talks to this server.
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { extname, join } from "node:path";
import { type ApiEngine, createApiEngine, createProvider, type ProviderAdapter } from "@conch/engine-client";
import { createNacreChatRoute } from "@conch/engine-client/ai-sdk";
import { createFileChatDirectory, createFileChatStore } from "@conch/engine-client/node";
import { createEngineHandler, createInProcessRunningTurns } from "@conch/engine-client/server";
import { toNodeHandler } from "srvx/node";
import { staticMiddleware } from "srvx/static";

export interface AiSdkChatServerOptions {
  readonly provider: ProviderAdapter;
  readonly model: string;
  /** Where the chats live (one person here; an app keeps a folder per signed-in person). */
  readonly dataDir: string;
  /** The built page (`vite build`'s dist). Default: the page from source, through Vite. */
  readonly pageDir?: string;
  /** The provider's key, so that it never leaves in a response (even echoed in a provider's error). */
  readonly apiKey?: string;
  /**
   * Fold ahead of the need, in the background after a turn (the engine's `foldAhead`). Default true; the
   * repository's versions test turns it off, so that its chat folds at the turns a replay of it folds at.
   */
  readonly foldAhead?: boolean;
}

export interface AiSdkChatServer {
  readonly server: Server;
  close(): Promise<void>;
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

/** The page from source: Vite in middleware mode, resolving the workspace's packages from their sources. */
async function pageFromSource(): Promise<{
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  close: () => Promise<void>;
}> {
  const [{ createServer: createViteServer, defaultClientConditions }, { default: react }] = await Promise.all([
    import("vite"),
    import("@vitejs/plugin-react"),
  ]);
  const vite = await createViteServer({
    configFile: false,
    root: import.meta.dirname,
    // Its own pre-bundle cache, apart from the repository's other dev servers'.
    cacheDir: join(import.meta.dirname, "../../node_modules/.vite-ai-sdk-chat"),
    plugins: [react()],
    resolve: { conditions: ["source", ...defaultClientConditions] },
    server: { middlewareMode: true, hmr: false },
    appType: "spa",
    logLevel: "warn",
  });
  return { handle: (req, res) => vite.middlewares(req, res), close: () => vite.close() };
}

export async function createAiSdkChatServer(options: AiSdkChatServerOptions): Promise<AiSdkChatServer> {
  const store = createFileChatStore({ root: options.dataDir });
  // One engine per model over the same chats: a too-long card's "Switch to …" answers again on a bigger one.
  const engines = new Map<string, ApiEngine>();
  const engineFor = (model: string) => {
    let engine = engines.get(model);
    if (!engine) {
      engine = createApiEngine({
        provider: options.provider,
        model,
        store,
        ...(options.foldAhead === undefined ? {} : { foldAhead: options.foldAhead }),
      });
      engines.set(model, engine);
    }
    return engine;
  };
  // One running turn per chat for the route and the wire protocol alike: a reload resumes the route's turn, and
  // either's stop ends it. The same person as `authorize` says.
  const runningTurns = createInProcessRunningTurns();
  const userId = () => "me";
  const engineHandler = createEngineHandler({
    runningTurns,
    basePath: "/api/engine",
    engineFor: (_userId, request) => engineFor(request.model ?? options.model),
    // One person on this computer; an app checks its session here (and before the chat route) and refuses.
    authorize: () => ({ userId: userId() }),
    chats: () => createFileChatDirectory(store),
    ...(options.apiKey ? { secrets: [options.apiKey] } : {}),
  });
  const page = servePage(options.pageDir ?? "");
  const api = toNodeHandler((request: Request) => {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith("/api/engine/")) return engineHandler(request);
    if (pathname.startsWith("/api/chat")) {
      const engine = engineFor(request.headers.get("x-nacre-model") ?? options.model);
      return createNacreChatRoute(engine, { runningTurns, userId })(request);
    }
    return page(request);
  });
  const source = options.pageDir === undefined ? await pageFromSource() : null;
  const server = createServer((req, res) => {
    const path = req.url?.split("?")[0] ?? "";
    // srvx types the request for HTTP/1 and HTTP/2 alike; node:http gives the HTTP/1 one.
    if (source && !path.startsWith("/api/")) return source.handle(req, res);
    return api(req as never, res as never);
  });
  return {
    server,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await source?.close();
    },
  };
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
  const { server } = await createAiSdkChatServer({
    ...providerFromEnv(process.env),
    dataDir: process.env.DATA_DIR ?? ".chats",
    pageDir: join(import.meta.dirname, "dist"),
  });
  const port = Number(process.env.PORT ?? 3000);
  server.listen(port, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${port}`));
}
