// The ai-sdk-chat example's server: the page (Vite, in middleware mode), its useChat route on the API engine,
// and the wire protocol's handler beside it, in one small Node server.
//
//   node --conditions=source --import tsx examples/ai-sdk-chat/server.ts   (OPENAI_API_KEY, EXAMPLE_MODEL)
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ApiEngine, createApiEngine, type ProviderAdapter } from "@conch/engine-client";
import { createNacreChatRoute } from "@conch/engine-client/ai-sdk";
import { createFileChatStore } from "@conch/engine-client/node";
import react from "@vitejs/plugin-react";
import { toNodeHandler } from "srvx/node";
import { createServer as createViteServer, defaultClientConditions } from "vite";
import { createExampleHandler } from "../engine-handler.js";

export interface AiSdkChatServerOptions {
  readonly provider: ProviderAdapter;
  readonly model: string;
  /** Where chats live; this example has one person, "me" (put your sign-in check before the routes). */
  readonly dataDir: string;
  readonly apiKey?: string;
  /** The wire protocol's Bearer token for "me". */
  readonly token?: string;
}

export interface AiSdkChatServer {
  readonly server: Server;
  close(): Promise<void>;
}

const root = fileURLToPath(new URL(".", import.meta.url));

export async function createAiSdkChatServer(options: AiSdkChatServerOptions): Promise<AiSdkChatServer> {
  const store = createFileChatStore({ root: join(options.dataDir, "me") });
  // One engine per model over the same chats: a too-long card's "Switch to …" answers again on a bigger one.
  const engines = new Map<string, ApiEngine>();
  const engineFor = (model: string) => {
    let engine = engines.get(model);
    if (!engine) {
      engine = createApiEngine({ provider: options.provider, model, store });
      engines.set(model, engine);
    }
    return engine;
  };
  const chatRoute = toNodeHandler((request: Request) =>
    createNacreChatRoute(engineFor(request.headers.get("x-nacre-model") ?? options.model))(request),
  );
  const engineHandler = toNodeHandler(
    createExampleHandler({
      provider: options.provider,
      model: options.model,
      dataDir: options.dataDir,
      people: new Map([[options.token ?? "change-me-please", "me"]]),
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    }),
  );
  const vite = await createViteServer({
    configFile: false,
    root,
    // Its own pre-bundle cache, apart from the other dev servers'.
    cacheDir: fileURLToPath(new URL("../../node_modules/.vite-ai-sdk-chat", import.meta.url)),
    plugins: [react()],
    resolve: { conditions: ["source", ...defaultClientConditions] },
    server: { middlewareMode: true, hmr: false },
    appType: "spa",
    logLevel: "warn",
  });
  const server = createServer((req, res) => {
    const path = req.url?.split("?")[0] ?? "";
    // srvx types the request for HTTP/1 and HTTP/2 alike; node:http gives the HTTP/1 one.
    if (path === "/api/chat") return chatRoute(req as never, res as never);
    if (path.startsWith("/api/engine/")) return engineHandler(req as never, res as never);
    vite.middlewares(req, res);
  });
  return {
    server,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await vite.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { createOpenAI } = await import("@conch/engine-client");
  const apiKey = process.env.OPENAI_API_KEY;
  const { server } = await createAiSdkChatServer({
    provider: createOpenAI({ apiKey }),
    model: process.env.EXAMPLE_MODEL ?? "gpt-5",
    dataDir: ".nacre-data/ai-sdk-chat",
    ...(apiKey ? { apiKey } : {}),
  });
  const port = Number(process.env.PORT ?? 3000);
  server.listen(port, "127.0.0.1", () => console.log(`useChat on Nacre: http://127.0.0.1:${port}`));
}
