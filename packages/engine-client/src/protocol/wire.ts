// The shapes of the wire protocol (docs/protocol.md), shared by the handler (server/) and the remote engine
// (remote/). Types and constants only: the handler's schemas (zod) stay in server/schemas.ts, so that the remote
// engine's bundle carries no schema library.
import type { ChatSnapshot, CompactResult, TurnInput } from "../engine.js";
import type { EngineEvent } from "../events.js";
import type { ModelInfo } from "../messages.js";

/** The protocol version this package speaks; `GET /capabilities` names the server's. */
export const protocolVersion = 1;

/** `GET /capabilities`. */
export interface WireCapabilities {
  readonly protocol: number;
  readonly engine: { readonly id: string; readonly displayName: string };
  /** Whether the server's engine declares `context` (compact and usage work). */
  readonly context: boolean;
  /**
   * Whether the server's engine declares `branches` (edits and regenerated answers are versions beside the old
   * ones, and `POST /chats/{id}/branch` selects one). Absent from servers before it was sent: false.
   */
  readonly branches?: boolean;
  /**
   * Whether `GET /chats/{id}/events` takes `until=idle` (the stream ends once the chat is idle: how a client hears
   * a fold ahead of the need after its turn). Absent from servers before it was sent: false.
   */
  readonly eventsUntilIdle?: boolean;
}

/** `GET /models`. */
export interface WireModels {
  readonly models: readonly ModelInfo[];
}

/** One chat of `GET /chats`. */
export interface WireChatListing {
  readonly id: string;
  readonly title: string;
  /** Milliseconds since the epoch of the chat's last change. */
  readonly updated: number;
}

/** `GET /chats`. */
export interface WireChatList {
  readonly chats: readonly WireChatListing[];
  /** The `offset` of the next page, or null when this is the last. */
  readonly nextOffset: number | null;
  /** How many chats the person has in all (absent from servers before it was sent). */
  readonly total?: number;
}

/** The body of `PATCH /chats/{chatId}`: the chat's new title. */
export interface WireRenameRequest {
  readonly title: string;
}

/** What `PATCH /chats/{chatId}` answers: the title as kept (one line, at most 80 characters). */
export interface WireRenameResponse {
  readonly id: string;
  readonly title: string;
}

/** `GET /chats/{chatId}`, and what `POST /chats/{chatId}/branch` answers. */
export interface WireChatPage {
  /**
   * The chat; `messages` holds this page of the active branch only (the newest, or those before `before`), in
   * `seq` order, each with `siblings` when it has other versions.
   */
  readonly snapshot: ChatSnapshot;
  /** Whether older messages than this page's first exist (ask with `before` = its seq). */
  readonly hasOlder: boolean;
  /** The id of the latest event already reflected in the snapshot; resume `GET /events?after=` from it. */
  readonly cursor: string | null;
  /** Whether a turn runs on the chat now; its events after `cursor` are at `GET /events`. */
  readonly running: boolean;
}

/**
 * The body of `POST /chats/{chatId}/turns`: a `TurnInput` less `chatId` (in the path) and the abort signal;
 * `text` may be left out with `retry` (a regenerate).
 */
export type WireTurnRequest = Omit<TurnInput, "chatId" | "abortSignal" | "text"> & {
  readonly text?: string;
  readonly model?: string;
};

/** The body of `POST /chats/{chatId}/branch`: any message of the branch to make active. */
export interface WireBranchRequest {
  readonly seq: number;
  readonly model?: string;
}

/** The body of `POST /chats/{chatId}/compact`. */
export interface WireCompactRequest {
  readonly keep?: string;
  readonly model?: string;
}

/** What `POST /chats/{chatId}/compact` answers: the result, and the fold events the engine sent meanwhile. */
export interface WireCompactResponse {
  readonly result: CompactResult;
  readonly events: readonly EngineEvent[];
}

/** What `POST /chats/{chatId}/abort` answers. */
export interface WireAbortResponse {
  /** Whether a turn was running (it has ended, with `turn-end`, by the time this arrives). */
  readonly aborted: boolean;
}

/** The problem types of the protocol (`type` is `urn:conch:problem:<name>`). */
export type WireProblemName =
  | "bad-request"
  | "invalid-json"
  | "invalid-body"
  | "invalid-chat-id"
  | "unauthorized"
  | "forbidden-origin"
  | "forbidden-host"
  | "not-found"
  | "method-not-allowed"
  | "stale-seq"
  | "busy"
  | "body-too-large"
  | "unsupported-media-type"
  | "rate-limited"
  | "unknown-model"
  | "no-context"
  | "no-branches"
  | "server-error";

/** An `application/problem+json` body (RFC 9457) with the protocol's extensions. */
export interface WireProblem {
  readonly type: `urn:conch:problem:${WireProblemName}`;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  /** `stale-seq` (and `not-found` of an unknown seq on `/branch`): where the next message goes. */
  readonly nextSeq?: number;
  /** `rate-limited`: seconds until a turn would be accepted (also the `Retry-After` header). */
  readonly retryAfter?: number;
  /** `invalid-body`: what failed, path by path. */
  readonly issues?: readonly { readonly path: string; readonly message: string }[];
}

export const problemTypePrefix = "urn:conch:problem:";
