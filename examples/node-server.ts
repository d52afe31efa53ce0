// Mounting the handler in a plain Node server (node:http), beside whatever else the server answers.
import { createServer, type Server } from "node:http";
import { toNodeHandler } from "srvx/node";
import { createExampleHandler, type ExampleOptions } from "./engine-handler.js";

export function createExampleServer(options: ExampleOptions): Server {
  const engine = toNodeHandler(createExampleHandler(options));
  return createServer((req, res) => {
    // srvx types the request for HTTP/1 and HTTP/2 alike; node:http gives the HTTP/1 one.
    if (req.url?.startsWith("/api/engine/")) return engine(req as never, res as never);
    res.writeHead(404).end();
  });
}

// node --conditions=source --import tsx examples/node-server.ts
if (import.meta.url === `file://${process.argv[1]}`) {
  const { createOpenAI } = await import("@conch/engine-client");
  const apiKey = process.env.OPENAI_API_KEY;
  const server = createExampleServer({
    provider: createOpenAI({ apiKey }),
    model: "gpt-5",
    dataDir: ".nacre-data/example",
    people: new Map([[process.env.EXAMPLE_TOKEN ?? "change-me-please", "me"]]),
    ...(apiKey ? { apiKey } : {}),
  });
  server.listen(3000, "127.0.0.1", () => console.log("listening on http://127.0.0.1:3000"));
}
