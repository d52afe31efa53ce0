import { ChatBusyError, ProblemResponse, TurnSequenceError } from "../errors.js";
import type { WireProblem, WireProblemName } from "../protocol/wire.js";
import { problemTypePrefix } from "../protocol/wire.js";

const titles: Readonly<Record<WireProblemName, string>> = {
  "bad-request": "The request is not one this server understands",
  "invalid-json": "The body is not valid JSON",
  "invalid-body": "The body does not have the expected fields",
  "invalid-chat-id": "The chat id is not allowed",
  unauthorized: "Sign in to use this server",
  "forbidden-origin": "Requests from this page's origin are refused",
  "forbidden-host": "This server does not answer to that host name",
  "not-found": "Nothing is here",
  "method-not-allowed": "This method is not allowed here",
  "stale-seq": "The chat has moved on: send the message at its next seq",
  busy: "The chat is still answering the previous turn",
  "body-too-large": "The body is larger than this server accepts",
  "unsupported-media-type": "The body must be application/json",
  "rate-limited": "Too many requests: wait before sending more",
  "unknown-model": "This server does not offer that model",
  "no-context": "This server's engine does not keep a transcript (no context capability)",
  "no-branches": "This server's engine keeps one version of each message (no branches capability)",
  "server-error": "The server could not complete the request",
};

/** A problem to answer with; `headers` ride along (Allow, Retry-After, WWW-Authenticate). */
export interface ProblemAnswer {
  readonly problem: WireProblem;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Builds a problem of the protocol. `detail` is for people and never carries a stack or a provider's body. */
export function problem(
  name: WireProblemName,
  status: number,
  extra: Omit<WireProblem, "type" | "title" | "status"> = {},
  headers?: Readonly<Record<string, string>>,
): ProblemAnswer {
  return {
    problem: { type: `${problemTypePrefix}${name}`, title: titles[name], status, ...extra },
    ...(headers ? { headers } : {}),
  };
}

/** Throws the problem (for use in expressions). */
export function fail(
  name: WireProblemName,
  status: number,
  extra?: Omit<WireProblem, "type" | "title" | "status">,
  headers?: Readonly<Record<string, string>>,
): never {
  throw new ProblemResponse(problem(name, status, extra, headers));
}

/** The 409 of a turn the engine refused at its start (a stale seq, a busy chat), or null for any other error. */
export function turnRefusalProblem(error: unknown): ProblemAnswer | null {
  if (TurnSequenceError.isInstance(error)) {
    return problem("stale-seq", 409, {
      detail: `The next message of this chat goes at seq ${error.expectedSeq}.`,
      nextSeq: error.expectedSeq,
    });
  }
  if (ChatBusyError.isInstance(error)) return problem("busy", 409);
  return null;
}
