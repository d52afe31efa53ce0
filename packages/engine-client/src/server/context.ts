import type { Engine } from "../engine.js";
import type { ErrorHandler } from "../errors.js";
import type { ModelInfo } from "../messages.js";
import { type BoundCounter, type HeldKind, heldBoundRetryAfter } from "./bounds.js";
import type { FoldsAhead } from "./fold-ahead.js";
import type { LimitCounter } from "./limits.js";
import type { EngineHandlerOptions } from "./options.js";
import { fail } from "./problems.js";
import type { ChatKey, RunningTurns } from "./running-turns.js";

/** What an endpoint gets. */
export interface Context {
  readonly request: Request;
  readonly url: URL;
  readonly userId: string;
  readonly options: EngineHandlerOptions;
  readonly turns: RunningTurns;
  /** The folds ahead running in this handler's engines, by chat. */
  readonly foldsAhead: FoldsAhead;
  readonly limits: LimitCounter;
  /** What the person holds open (turns, streams), against the server's bounds. */
  readonly bounds: BoundCounter;
  /** The models the person may name (`GET /models`), read at most once a minute. */
  readonly models: () => Promise<readonly ModelInfo[]>;
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

/** Refuses (400 `unknown-model`) a model id that `GET /models` does not list. */
export async function checkModel(context: Context, model: string | undefined): Promise<void> {
  if (model === undefined) return;
  const models = await context.models();
  if (!models.some((listed) => listed.id === model)) {
    fail("unknown-model", 400, { detail: "Name a model GET /models lists." });
  }
}

/** Refuses (429) one more of what the person holds open past its bound; else the place and how to give it back. */
export function takePlace(context: Context, kind: HeldKind): () => void {
  const release = context.bounds.take(context.userId, kind);
  if (release) return release;
  const retryAfter = heldBoundRetryAfter;
  const what = kind === "turns" ? "turns running at once" : "event streams open at once";
  return fail("rate-limited", 429, { retryAfter, detail: `Too many ${what}.` }, { "retry-after": String(retryAfter) });
}

export function engineOf(context: Context, model?: string): Promise<Engine> {
  return Promise.resolve(context.options.engineFor(context.userId, model !== undefined ? { model } : {}));
}

export function keyOf(context: Context, chatId: string): ChatKey {
  return { userId: context.userId, chatId };
}
