// `pnpm serve [--port N] [--host H] [--no-build]`: the demo page, built, and the engine behind `/api/engine`, on one Node
// process: the production shape of `pnpm dev`. Reads the same NACRE_* variables; keeps chats in the Postgres
// named by DATABASE_URL (several instances may share it), else in PGlite under NACRE_DATA_DIR (default
// .nacre-data/; see serve-chats.ts); NACRE_SERVER_TOKENS="alice:token1,bob:token2" asks for a Bearer token
// and keeps each person's chats apart. Without tokens it serves one local person on loopback only.
import { existsSync } from "node:fs";
import { isIP } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createApiEngine, createProvider, type ModelInfo, type ProviderAdapter } from "@conch/engine-client";
import { createEngineHandler } from "@conch/engine-client/server";
import { serve } from "srvx";
import { staticMiddleware } from "srvx/static";
import { build } from "vite";
import {
  firstChatModel,
  loadSharedConversations,
  startDemoFakeProvider,
  summariserModel,
} from "../dev/api/fake-provider.js";
import { readProviderEnv } from "../dev/api/provider-env.js";
import { conversationsDir } from "../dev/transcript-plugin.js";
import { servePageDir } from "../dev/vite.serve.config.js";
import { openServeChats, type ServeChats } from "./serve-chats.js";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const mountPath = "/api/engine";
const systemPrompt =
  "You are a helpful assistant in a chat. Answer the person's questions; keep what was agreed earlier in mind.";

function fail(message: string): never {
  console.error(`pnpm serve: ${message}`);
  process.exit(1);
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare === "::1" || (isIP(bare) === 4 && bare.startsWith("127."));
}

/** `alice:token1,bob:token2` → token → person; null when unset. */
function readTokens(value: string | undefined): Map<string, string> | null {
  if (value === undefined || value.trim() === "") return null;
  const tokens = new Map<string, string>();
  for (const pair of value.split(",")) {
    const [user, token, ...rest] = pair.trim().split(":");
    if (!user || !token || rest.length > 0 || !/^[A-Za-z0-9._-]{1,64}$/.test(user) || token.length < 8) {
      fail(
        `NACRE_SERVER_TOKENS must be "name:token,name:token" (names of letters, digits, . _ -; tokens of 8+ characters).`,
      );
    }
    tokens.set(token, user);
  }
  return tokens;
}

const { values } = parseArgs({
  options: { port: { type: "string" }, host: { type: "string" }, "no-build": { type: "boolean" } },
});
const host = values.host ?? "127.0.0.1";
const port = values.port === undefined ? 5175 : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) fail(`--port ${values.port} is not a port number.`);
const tokens = readTokens(process.env.NACRE_SERVER_TOKENS);
if (!tokens && !isLoopback(host)) {
  fail(
    `--host ${host} is not this computer's loopback, and without NACRE_SERVER_TOKENS anyone who reaches it could use ` +
      `your provider. Set NACRE_SERVER_TOKENS="name:token,…" or listen on 127.0.0.1.`,
  );
}

let own: ReturnType<typeof readProviderEnv>;
try {
  own = readProviderEnv(process.env);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

let provider: ProviderAdapter;
let defaultModel: string | undefined;
let displayName: string;
let closeFake: () => Promise<void> = async () => undefined;
const secrets: string[] = [];
if (own) {
  provider = createProvider(own.provider, {
    baseURL: own.baseURL,
    ...(own.apiKey !== undefined ? { apiKey: own.apiKey } : {}),
    local: own.local,
    ...(own.cheapestModel !== undefined ? { cheapestModel: own.cheapestModel } : {}),
    ...(own.smallModel !== undefined ? { smallModel: own.smallModel } : {}),
  });
  if (own.apiKey) secrets.push(own.apiKey);
  defaultModel = own.model;
  displayName = own.name;
} else {
  const fake = await startDemoFakeProvider({
    dialect: "openrouter",
    conversations: loadSharedConversations(conversationsDir(repoRoot)),
  });
  provider = createProvider("openrouter", {
    baseURL: fake.server.baseURL,
    local: false,
    cheapestModel: summariserModel,
  });
  defaultModel = firstChatModel;
  displayName = "OpenRouter (fake, on this computer)";
  closeFake = () => fake.server.close();
}

let models: readonly ModelInfo[] = [];
try {
  models = await provider.listModels({ timeoutMs: 20_000 });
} catch (error) {
  console.error(`pnpm serve: the provider's model list failed (${String(error)}); going on with default windows.`);
}
if (defaultModel && !models.some((model) => model.id === defaultModel)) {
  models = [{ id: defaultModel, displayName: defaultModel, ready: true, local: provider.local }, ...models];
}
const model = defaultModel ?? models.find((candidate) => candidate.ready)?.id;
if (!model) fail("the provider lists no models; name one with NACRE_MODEL.");

const dataDir = resolve(process.env.NACRE_DATA_DIR?.trim() || ".nacre-data");
// How long an instance's hold on a chat outlives it (Postgres only); tests shorten it.
const leaseMs = process.env.NACRE_LEASE_MS ? Number(process.env.NACRE_LEASE_MS) : undefined;
if (leaseMs !== undefined && !(Number.isInteger(leaseMs) && leaseMs >= 300)) {
  fail(`NACRE_LEASE_MS must be a whole number of milliseconds, 300 or more.`);
}
let chats: ServeChats;
try {
  chats = await openServeChats({
    databaseUrl: process.env.DATABASE_URL,
    dataDir,
    log: (line) => console.error(`pnpm serve: ${line}`),
    ...(leaseMs !== undefined ? { leaseMs } : {}),
  });
} catch (error) {
  // A schema too new, a folder in use, a log that cannot be read: said as it is, nothing changed.
  fail(error instanceof Error ? error.message : String(error));
}

// --no-build serves the page the last start built: several instances started side by side build it once.
if (!values["no-build"] || !existsSync(join(servePageDir, "index.html"))) {
  await build({ configFile: join(repoRoot, "dev/vite.serve.config.ts") });
}

const handler = createEngineHandler({
  basePath: mountPath,
  // A new engine per request over the person's store: each request reads the chat as it is stored.
  engineFor: (userId, request) =>
    createApiEngine({
      provider,
      model: request.model ?? model,
      store: chats.storeOf(userId),
      models,
      systemPrompt,
      id: "api",
      displayName,
    }),
  authorize(request) {
    if (!tokens) return { userId: "local" };
    const match = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "");
    const userId = match ? tokens.get(match[1] as string) : undefined;
    return userId ? { userId } : null;
  },
  listModels: async () => models,
  chats: chats.chatsOf,
  ...(chats.runningTurns ? { runningTurns: chats.runningTurns } : {}),
  // A wildcard listen address has no one name: with tokens, any Host (a rebound page has no token to send).
  allowedHosts: isLoopback(host) ? [] : host === "0.0.0.0" || host === "::" ? "any" : [host],
  secrets,
});

const server = serve({
  hostname: host,
  port,
  silent: true,
  middleware: [
    (request, next) => (new URL(request.url).pathname.startsWith(mountPath) ? handler(request) : next()),
    staticMiddleware({ dir: servePageDir }),
  ],
  // Any other path is the page (a reload of a deep link).
  fetch: () => staticFallback(),
});
async function staticFallback(): Promise<Response> {
  const { readFile } = await import("node:fs/promises");
  return new Response(await readFile(join(servePageDir, "index.html")), {
    headers: { "content-type": "text/html; charset=utf-8" },
  });
}
await server.ready();
const address = new URL(server.url as string);
console.log(`listening on http://${address.host}`);
console.log(
  `pnpm serve: ${displayName}; chats in ${chats.where}; ${tokens ? `${tokens.size} people with tokens` : "one local person, loopback only"}.`,
);

const stop = async () => {
  await server.close(true);
  await chats.close();
  await closeFake();
  process.exit(0);
};
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
