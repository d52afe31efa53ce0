import { defaultErrorHandler, EngineClientError, InvalidChatIdError, ProblemResponse } from "../errors.js";
import type { Context, Route } from "./context.js";
import { createLimitCounter } from "./limits.js";
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
  const limits = createLimitCounter(options.limits);
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
        limits,
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
