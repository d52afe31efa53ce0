import { apiEngineUnderTest, engineContract } from "@conch/fake-provider";
import { serve } from "srvx";
import { createEngineHandler } from "../server/handler.js";
import { createRemoteEngine } from "./remote-engine.js";

// The engine contract on the remote engine: the API engine over the fake provider, behind the handler on
// loopback (real HTTP), a new engine over the chat's store for each request, as `pnpm serve` runs it.
engineContract("remote engine", async (turns) => {
  const under = await apiEngineUnderTest(turns);
  const handler = createEngineHandler({
    engineFor: () => under.another(),
    authorize: (request) => (request.headers.get("authorization") === "Bearer contract" ? { userId: "person" } : null),
    onError: () => undefined,
  });
  const server = serve({ fetch: handler, port: 0, hostname: "127.0.0.1", silent: true, gracefulShutdown: false });
  await server.ready();
  const connect = () =>
    createRemoteEngine({ baseURL: server.url as string, headers: { authorization: "Bearer contract" } });
  return {
    engine: await connect(),
    another: connect,
    longText: under.longText,
    async close() {
      await server.close(true);
      await under.close?.();
    },
  };
});
