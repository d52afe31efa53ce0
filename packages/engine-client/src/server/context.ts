import type { Engine } from "../engine.js";
import type { ErrorHandler } from "../errors.js";
import type { LimitCounter } from "./limits.js";
import type { EngineHandlerOptions } from "./options.js";
import type { ChatKey, RunningTurns } from "./running-turns.js";

/** What an endpoint gets. */
export interface Context {
  readonly request: Request;
  readonly url: URL;
  readonly userId: string;
  readonly options: EngineHandlerOptions;
  readonly turns: RunningTurns;
  readonly limits: LimitCounter;
  /** The host's secrets (`options.secrets`, 4 characters or more). */
  readonly secrets: readonly string[];
  /** Removes whole secrets from a text that leaves (a JSON body, an event's JSON). */
  readonly redact: (text: string) => string;
  readonly onError: ErrorHandler;
  readonly maxBodyBytes: number;
  /** CORS headers for a listed origin. */
  readonly headers: Readonly<Record<string, string>>;
}

export type Route = (context: Context) => Promise<Response>;

/** A JSON answer, with the host's secrets removed. */
export function json(context: Context, value: unknown, status = 200): Response {
  return new Response(context.redact(JSON.stringify(value)), {
    status,
    headers: { ...context.headers, "content-type": "application/json", "cache-control": "no-store" },
  });
}

export function engineOf(context: Context, model?: string): Promise<Engine> {
  return Promise.resolve(context.options.engineFor(context.userId, model !== undefined ? { model } : {}));
}

export function keyOf(context: Context, chatId: string): ChatKey {
  return { userId: context.userId, chatId };
}
