import type { Engine } from "../engine.js";
import type { ErrorHandler } from "../errors.js";
import type { ModelInfo } from "../messages.js";
import type { ChatDirectory } from "../transcript/chat-directory.js";
import type { PersonBounds } from "./bounds.js";
import type { PersonLimits } from "./limits.js";
import type { RunningTurns } from "./running-turns.js";
import type { OriginRules } from "./security.js";

/** Who sent a request, as the host's `authorize` decides. */
export interface Authorized {
  /** The person; their chats are theirs alone. */
  readonly userId: string;
}

/** Options of `createEngineHandler`. */
export interface EngineHandlerOptions extends OriginRules {
  /**
   * The engine for a person (its store scoped to them), talking to `model` when the request names one. Called
   * for each request; a host may keep engines, but only one engine at a time should write a chat.
   */
  engineFor(userId: string, request: { readonly model?: string }): Engine | Promise<Engine>;
  /** The person a request comes from, or null to refuse it (401). */
  authorize(request: Request): Authorized | null | Promise<Authorized | null>;
  /** Largest body accepted; more is refused with 413 unread. Default 4 MiB. */
  readonly maxBodyBytes?: number;
  /** Where the handler is mounted (`/api/engine`); paths of the protocol follow it. Default: the root. */
  readonly basePath?: string;
  /** Per-person limits: over them, 429 with `Retry-After`, and nothing reaches the provider. */
  readonly limits?: PersonLimits | ((userId: string) => PersonLimits);
  /**
   * What one person may hold at once (turns, open event streams) and start a minute, whatever `limits` says: past
   * a bound, 429 with `Retry-After`. Defaults (8 turns, 32 streams, 120 turns a minute) no ordinary use meets;
   * `false` turns them off (a load test from one person).
   */
  readonly bounds?: PersonBounds | false;
  /**
   * A person's chat list (`GET /chats`, `PATCH` and `DELETE /chats/{id}`), usually their store's `directory`.
   * Without it `GET /chats` answers 404, `PATCH` and `DELETE` 405.
   */
  readonly chats?: (userId: string) => ChatDirectory;
  /**
   * The models `GET /models` lists, and the only ones a request may name (others: 400 `unknown-model`); read again
   * after a minute. Default: the engine's own `listModels()`, when it has one.
   */
  readonly listModels?: (userId: string) => Promise<readonly ModelInfo[]>;
  /** The per-chat lease and the running turn's events. Default: in this process (one instance). */
  readonly runningTurns?: RunningTurns;
  /** Strings that never leave in a response (the provider's key): replaced by `[redacted]`. */
  readonly secrets?: readonly string[];
  /**
   * Told of unexpected errors (`during: "request"`: the client only gets a 500) and of a turn that failed while
   * its events were recorded (`during: "turn"`: it still ends for every follower). Default: `defaultErrorHandler`, which logs it.
   */
  readonly onError?: ErrorHandler;
}
