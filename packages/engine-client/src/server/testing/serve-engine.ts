// One engine behind the handler on loopback (real HTTP), for tests: a Bearer token `t` is person `person`.
import { serve } from "srvx";
import type { Engine } from "../../engine.js";
import { createEngineHandler } from "../handler.js";

export const servedAuth = { authorization: "Bearer t" } as const;

/** Serves `engine`; its base URL, and how to stop it. */
export async function serveEngine(engine: Engine): Promise<{ readonly baseURL: string; close(): Promise<void> }> {
  const handler = createEngineHandler({
    engineFor: () => engine,
    authorize: (request) =>
      request.headers.get("authorization") === servedAuth.authorization ? { userId: "person" } : null,
    onError: () => undefined,
  });
  const server = serve({ fetch: handler, port: 0, hostname: "127.0.0.1", silent: true, gracefulShutdown: false });
  await server.ready();
  return { baseURL: (server.url as string).replace(/\/$/, ""), close: () => server.close(true) };
}
