// The dev server's side of `pnpm dev` (Node only): starts the fake provider (or reads NACRE_* for your own),
// forwards `/provider/*` to it with the key added here, serves the footer switch, and tells the page which
// setup is active at `/__nacre/setup` (never the key). A JSON endpoint rather than a virtual module: the
// dev:mock server, whose root is dev/, scans every page under it, this one too, and must resolve its imports.
import type { IncomingMessage, ServerResponse } from "node:http";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { Plugin, ViteDevServer } from "vite";
import { conversationsDir } from "../transcript-plugin.js";
import {
  type DemoFakeProvider,
  describeTranscript,
  fakeModels,
  firstChatModel,
  loadSharedConversations,
  refusalWordings,
  startDemoFakeProvider,
  summariserModel,
} from "./fake-provider.js";
import { authHeaders, databaseNameFor, readProviderEnv } from "./provider-env.js";
import { forward, readBody } from "./proxy.js";
import {
  type ApiPageSetup,
  cutNextPath,
  lastRequestPath,
  providerPath,
  type RefusalState,
  type RefusalWording,
  refusePath,
  setupPath,
} from "./setup.js";

const systemPrompt =
  "You are a helpful assistant in a chat. Answer the person's questions; keep what was agreed earlier in mind.";

/** The text of every message of a chat request, for counting what a forced refusal says was sent. */
function promptText(body: unknown): string {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === "string") texts.push(value);
    else if (Array.isArray(value)) for (const item of value) walk(item);
    else if (typeof value === "object" && value !== null) {
      const record = value as Record<string, unknown>;
      for (const key of ["content", "text", "system", "messages"]) walk(record[key]);
    }
  };
  walk(body);
  return texts.join("\n");
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(value));
}

interface Running {
  readonly setup: ApiPageSetup;
  readonly target: string;
  readonly auth: Readonly<Record<string, string>>;
  readonly fake: DemoFakeProvider | null;
  close(): Promise<void>;
}

async function startSetup(repoRoot: string, log: (line: string) => void): Promise<Running> {
  const own = readProviderEnv(process.env);
  if (own) {
    log(`pnpm dev: talking to ${own.name} (${own.baseURL}) through /provider; the key stays in this process.`);
    return {
      setup: {
        kind: "own",
        provider: own.provider,
        providerName: own.name,
        target: own.baseURL,
        ...(own.apiPath ? { apiPath: own.apiPath } : {}),
        hasKey: own.apiKey !== undefined,
        local: own.local,
        ...(own.model !== undefined ? { model: own.model } : {}),
        ...(own.cheapestModel !== undefined ? { cheapestModel: own.cheapestModel } : {}),
        ...(own.smallModel !== undefined ? { smallModel: own.smallModel } : {}),
        databaseName: databaseNameFor(own),
        systemPrompt,
        fake: null,
      },
      target: own.baseURL,
      auth: authHeaders(own),
      fake: null,
      close: async () => undefined,
    };
  }
  const directory = conversationsDir(repoRoot);
  const conversations = loadSharedConversations(directory);
  const fake = await startDemoFakeProvider({ dialect: "openrouter", conversations });
  log(`pnpm dev: fake provider (OpenRouter's API) at ${fake.server.baseURL}, reached by the page through /provider.`);
  if (conversations.length === 0) log(`pnpm dev: no transcripts in ${directory}; the fake model reads messages back.`);
  return {
    setup: {
      kind: "fake",
      provider: "openrouter",
      providerName: "OpenRouter (fake, on this computer)",
      target: fake.server.baseURL,
      hasKey: false,
      // It plays OpenRouter, a provider far away: the cheap model writes summaries, windows come from its list.
      local: false,
      model: firstChatModel,
      cheapestModel: summariserModel,
      databaseName: "nacre-dev-fake-provider",
      systemPrompt,
      fake: {
        models: fakeModels.map(({ id, displayName, window }) => ({ id, displayName, window })),
        summariserModel,
        refusalWordings: refusalWordings("openrouter"),
        transcript: describeTranscript(conversations),
      },
    },
    target: fake.server.baseURL,
    auth: {},
    fake,
    close: () => fake.server.close(),
  };
}

/**
 * Why a request to `/provider` is refused, or null: only the page itself may use the key this process adds.
 * A browser says where a request comes from (`Sec-Fetch-Site`, `Origin`); a request from another site, or
 * one whose `Origin` is not this server, is refused whatever its content type. Tools that send neither
 * header (curl, scripts on this computer) are let through: they could read the key from the environment anyway.
 */
export function crossSiteRefusal(req: Pick<IncomingMessage, "headers">): string | null {
  const site = req.headers["sec-fetch-site"];
  if (typeof site === "string" && site !== "same-origin" && site !== "none") {
    return `/provider serves this page only (Sec-Fetch-Site: ${site}).`;
  }
  const origin = req.headers.origin;
  if (typeof origin === "string") {
    let host: string | null = null;
    try {
      host = new URL(origin).host;
    } catch {
      host = null;
    }
    if (host === null || host !== req.headers.host) return `/provider serves this page only (Origin: ${origin}).`;
  }
  return null;
}

/** The footer switch: the next `remaining` requests of a chat model are refused for length in `provider`'s words. */
function createRefusals(fake: DemoFakeProvider, wordings: readonly RefusalWording[]) {
  const played = wordings.some((wording) => wording.provider === "openrouter");
  let state: RefusalState = { remaining: 0, provider: played ? "openrouter" : (wordings[0]?.provider ?? "openrouter") };
  return {
    state: () => state,
    arm(count: unknown, provider: unknown): RefusalState | string {
      if (count !== 0 && count !== 1 && count !== 2) return "count must be 0, 1 or 2";
      if (typeof provider !== "string" || !wordings.some((wording) => wording.provider === provider)) {
        return `provider must be one of ${wordings.map((wording) => wording.provider).join(", ")}`;
      }
      state = { remaining: count, provider };
      return state;
    },
    /** Called with each chat request on its way to the fake server. */
    beforeChatRequest(body: unknown): void {
      if (state.remaining <= 0) return;
      const text = promptText(body);
      // The summariser's requests go through: only the chat model's answer is refused.
      if (text.includes("<chat-lines>")) return;
      const model = (body as { model?: unknown } | null)?.model;
      const window = fakeModels.find((candidate) => candidate.id === model)?.window;
      if (window === undefined) return;
      state = { ...state, remaining: state.remaining - 1 };
      // A refusal like a real one: the provider counted more than its window (the estimate was short).
      fake.refuseNextForLength(state.provider, window, Math.max(countTokens(text), window) + 512);
    },
  };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

/**
 * `pnpm dev`: the fake provider (or yours, from NACRE_*) behind `/provider`, the setup at `/__nacre/setup`,
 * the footer switch at `/__nacre/refuse`, and `/__nacre/cut-next` (the next reply cut off at its output limit).
 */
export function nacreApiPlugin(options: { repoRoot: string }): Plugin {
  return {
    name: "nacre-api",
    apply: "serve",
    async configureServer(server: ViteDevServer) {
      const log = (line: string) => server.config.logger.info(line);
      const current = await startSetup(options.repoRoot, log);
      server.httpServer?.once("close", () => {
        void current.close();
      });
      const refusals = current.fake ? createRefusals(current.fake, current.setup.fake?.refusalWordings ?? []) : null;

      server.middlewares.use(providerPath, (req: IncomingMessage, res: ServerResponse) => {
        // The key is added here: a page of another site must never get it used for itself.
        const refusal = crossSiteRefusal(req);
        if (refusal) return sendJson(res, 403, { error: { message: refusal, type: "cross_site_refused" } });
        void (async () => {
          const body = await readBody(req);
          if (refusals && req.method === "POST" && /\/chat\/completions$/.test(req.url?.split("?")[0] ?? "")) {
            refusals.beforeChatRequest(parseJson(body));
          }
          await forward(req, res, { target: current.target, body, auth: current.auth });
        })().catch((error: unknown) => {
          if (!res.headersSent) sendJson(res, 502, { error: { message: String(error), type: "proxy_error" } });
          else res.destroy();
        });
      });

      server.middlewares.use(setupPath, (_req: IncomingMessage, res: ServerResponse) => {
        sendJson(res, 200, current.setup);
      });

      server.middlewares.use(refusePath, (req: IncomingMessage, res: ServerResponse) => {
        if (!refusals) return sendJson(res, 404, { error: "Only the fake provider can be told to refuse." });
        if (req.method === "GET") return sendJson(res, 200, refusals.state());
        if (req.method !== "POST") return sendJson(res, 405, { error: "GET or POST" });
        void readBody(req).then((body) => {
          const request = parseJson(body) as { count?: unknown; provider?: unknown } | undefined;
          const result = refusals.arm(request?.count, request?.provider);
          if (typeof result === "string") sendJson(res, 400, { error: result });
          else sendJson(res, 200, result);
        });
      });

      server.middlewares.use(cutNextPath, (req: IncomingMessage, res: ServerResponse) => {
        if (!current.fake) return sendJson(res, 404, { error: "Only the fake provider can be told to cut a reply." });
        if (req.method !== "POST") return sendJson(res, 405, { error: "POST" });
        current.fake.cutNextReply();
        sendJson(res, 200, { cut: "next" });
      });

      server.middlewares.use(lastRequestPath, (_req: IncomingMessage, res: ServerResponse) => {
        if (!current.fake) return sendJson(res, 404, { error: "Only the fake provider keeps its last request." });
        sendJson(res, 200, current.fake.lastRequest());
      });
    },
  };
}
