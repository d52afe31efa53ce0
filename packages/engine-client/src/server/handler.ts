import type { Engine } from "../engine.js";
import { defaultErrorHandler, EngineClientError, InvalidChatIdError, ProblemResponse } from "../errors.js";
import type { ModelInfo } from "../messages.js";
import { createBoundCounter, defaultPersonBounds } from "./bounds.js";
import type { Context, Route } from "./context.js";
import type { FoldsAhead } from "./fold-ahead.js";
import { createLimitCounter, type PersonLimits } from "./limits.js";
import type { EngineHandlerOptions } from "./options.js";
import { type ProblemAnswer, problem, turnRefusalProblem } from "./problems.js";
import { routeFor } from "./routes.js";
import { createInProcessRunningTurns } from "./running-turns.js";
import { checkOrigin, corsHeaders, preflight } from "./security.js";
import { redactWhole } from "./stream-redaction.js";

/** A web-standard request handler: mount it in Node, Next.js, Bun, Deno or Workers. */
export type EngineHandler = (request: Request) => Promise<Response>;

const defaultMaxBodyBytes = 4 * 1024 * 1024;

/**
 * The engine behind one fetch handler, speaking the protocol of docs/protocol.md: per-person chats (the same
 * chat id names a different chat for each person), turns as Server-Sent Events that a reload resumes, abort,
 * folds on request, per-person limits, and `application/problem+json` for every refusal. Only web-standard
 * `Request` and `Response`.
 */
export function createEngineHandler(options: EngineHandlerOptions): EngineHandler {
  const basePath = (options.basePath ?? "").replace(/\/+$/, "");
  const turns = options.runningTurns ?? createInProcessRunningTurns();
  const foldsAhead: FoldsAhead = new Map();
  const bounds = options.bounds === false ? null : { ...defaultPersonBounds, ...options.bounds };
  const held = createBoundCounter(bounds);
  const hostLimits = options.limits;
  const limitsOf = (userId: string): PersonLimits =>
    typeof hostLimits === "function" ? hostLimits(userId) : (hostLimits ?? {});
  // The bound on turns a minute stands beside the host's own limit: the lower one applies.
  const limits = createLimitCounter((userId) => {
    const own = limitsOf(userId);
    if (!bounds) return own;
    return { ...own, turnsPerMinute: Math.min(own.turnsPerMinute ?? Number.POSITIVE_INFINITY, bounds.turnsPerMinute) };
  });
  const modelLists = createModelLists(options);
  const secrets = (options.secrets ?? []).filter((secret) => secret.length >= 4);
  const redact = (text: string): string => redactWhole(text, secrets);
  const onError = options.onError ?? defaultErrorHandler;
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;

  function problemResponse(answer: ProblemAnswer, origin: string | null): Response {
    return new Response(redact(JSON.stringify(answer.problem)), {
      status: answer.problem.status,
      headers: {
        ...corsHeaders(origin),
        ...answer.headers,
        "content-type": "application/problem+json",
        "cache-control": "no-store",
      },
    });
  }

  /** The problem an error becomes; nothing of an unexpected error leaves but a generic 500. */
  function answerFor(error: unknown): ProblemAnswer {
    if (ProblemResponse.isInstance(error)) return error.answer;
    const refusal = turnRefusalProblem(error);
    if (refusal) return refusal;
    if (InvalidChatIdError.isInstance(error)) return problem("invalid-chat-id", 400, { detail: error.message });
    onError(error, { during: "request" });
    return problem("server-error", 500, EngineClientError.isInstance(error) ? { detail: error.name } : {});
  }

  return async function handle(request: Request): Promise<Response> {
    let origin: string | null = null;
    try {
      origin = checkOrigin(request, options);
      const url = new URL(request.url);
      if (request.method === "OPTIONS") {
        if (origin === null) return problemResponse(problem("forbidden-origin", 403), null);
        return preflight(origin);
      }
      if (!url.pathname.startsWith(basePath)) return problemResponse(problem("not-found", 404), origin);
      const route: Route = routeFor(url.pathname.slice(basePath.length), request.method);
      const who = await options.authorize(request);
      if (!who) {
        return problemResponse(
          problem("unauthorized", 401, {}, { "www-authenticate": 'Bearer realm="engine"' }),
          origin,
        );
      }
      const context: Context = {
        request,
        url,
        userId: who.userId,
        options,
        turns,
        foldsAhead,
        limits,
        bounds: held,
        models: () => modelLists.of(who.userId),
        secrets,
        redact,
        onError,
        maxBodyBytes,
        headers: corsHeaders(origin),
      };
      return await route(context);
    } catch (error) {
      return problemResponse(answerFor(error), origin);
    }
  };
}

const modelListMs = 60_000;

/** Each person's model list (`GET /models`), read at most once a minute; what names a model is checked against it. */
function createModelLists(options: EngineHandlerOptions) {
  const lists = new Map<string, { readonly at: number; readonly models: Promise<readonly ModelInfo[]> }>();
  async function read(userId: string): Promise<readonly ModelInfo[]> {
    if (options.listModels) return options.listModels(userId);
    const engine = (await options.engineFor(userId, {})) as Engine & {
      listModels?: () => Promise<readonly ModelInfo[]>;
    };
    return typeof engine.listModels === "function" ? engine.listModels() : [];
  }
  return {
    of(userId: string): Promise<readonly ModelInfo[]> {
      const now = Date.now();
      const kept = lists.get(userId);
      if (kept && now - kept.at < modelListMs) return kept.models;
      // Only the people of the last minute are kept.
      for (const [name, entry] of lists) if (now - entry.at >= modelListMs) lists.delete(name);
      const models = read(userId);
      lists.set(userId, { at: now, models });
      models.catch(() => lists.delete(userId));
      return models;
    },
  };
}
