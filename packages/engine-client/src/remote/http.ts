import { ChatBusyError, RemoteEngineError, TurnSequenceError } from "../errors.js";
import type { WireProblem } from "../protocol/wire.js";

/** How the remote engine reaches its server. */
export interface RemoteHttp {
  /** Sends a request to `path` under the base URL, with the host's headers. */
  request(
    path: string,
    init?: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response>;
  /** A JSON answer, or the server's problem as an error. */
  getJson<T>(path: string, init?: { method?: string; body?: unknown }): Promise<T>;
}

export type HeadersOption = Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>);

/** Resolves the base URL against the page's address in a browser (a path like `/api/engine` is fine there). */
function absoluteBase(baseURL: string): string {
  const location = (globalThis as { location?: { href: string } }).location;
  const absolute = location ? new URL(baseURL, location.href).href : new URL(baseURL).href;
  return absolute.replace(/\/+$/, "");
}

export function createRemoteHttp(
  baseURL: string,
  fetchFn: typeof fetch,
  headers: HeadersOption | undefined,
): RemoteHttp {
  const base = absoluteBase(baseURL);
  const http: RemoteHttp = {
    request(path, init = {}) {
      const extra = typeof headers === "function" ? headers() : (headers ?? {});
      const hasBody = init.body !== undefined;
      return fetchFn(`${base}${path}`, {
        method: init.method ?? (hasBody ? "POST" : "GET"),
        headers: { ...extra, ...(hasBody ? { "content-type": "application/json" } : {}), ...init.headers },
        ...(hasBody ? { body: JSON.stringify(init.body) } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
        cache: "no-store",
      });
    },
    async getJson<T>(path: string, init?: { method?: string; body?: unknown }): Promise<T> {
      const response = await http.request(path, init);
      if (!response.ok) throw await problemError(response);
      return (await response.json()) as T;
    },
  };
  return http;
}

/** The error a refusal becomes: a stale seq and a busy chat as the engine's own errors, else RemoteEngineError. */
export async function problemError(
  response: Response,
  turn?: { readonly chatId: string; readonly seq: number },
): Promise<Error> {
  let problem: WireProblem | null = null;
  try {
    const body = (await response.json()) as WireProblem;
    if (typeof body === "object" && body !== null && typeof body.type === "string") problem = body;
  } catch {
    problem = null;
  }
  if (turn && response.status === 409 && problem?.type === "urn:conch:problem:stale-seq") {
    return new TurnSequenceError({ chatId: turn.chatId, expectedSeq: problem.nextSeq ?? -1, actualSeq: turn.seq });
  }
  if (turn && response.status === 409 && problem?.type === "urn:conch:problem:busy")
    return new ChatBusyError(turn.chatId);
  return new RemoteEngineError({ status: response.status, problem });
}

export function chatPath(chatId: string, rest = ""): string {
  return `/chats/${encodeURIComponent(chatId)}${rest}`;
}
