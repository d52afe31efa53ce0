// Which requests the handler answers at all: its own host names (no DNS rebinding), same-origin pages and the
// origins the host lists (no cross-site requests), and CORS only for those listed origins.
import { fail } from "./problems.js";

/** Host names (no port) that a server on this computer answers to unless told otherwise. */
const loopbackHosts = ["localhost", "127.0.0.1", "[::1]"];

export interface OriginRules {
  /** Host names the server is reached at (no port), or "any". Default: loopback names only. */
  readonly allowedHosts?: readonly string[] | "any";
  /** Origins (`https://app.example.com`) of other sites' pages allowed to call, with CORS. Default: none. */
  readonly allowedOrigins?: readonly string[];
}

function hostnameOf(host: string): string {
  const lower = host.toLowerCase();
  if (lower.startsWith("[")) return lower.slice(0, lower.indexOf("]") + 1);
  return lower.replace(/:\d+$/, "");
}

/** The host the request was addressed to (the `Host` header, else the URL's). */
export function requestHost(request: Request): string {
  return request.headers.get("host") ?? new URL(request.url).host;
}

/**
 * Refuses (403) a request addressed to a host name that is not the server's own, or sent by a page of another
 * origin that is not listed. Returns the listed origin to answer with CORS headers, or null.
 */
export function checkOrigin(request: Request, rules: OriginRules): string | null {
  const host = requestHost(request);
  const hostname = hostnameOf(host);
  const allowedHosts = rules.allowedHosts ?? [];
  const hostAllowed =
    allowedHosts === "any" ||
    loopbackHosts.includes(hostname) ||
    hostname.endsWith(".localhost") ||
    allowedHosts.some((allowed) => hostnameOf(allowed) === hostname);
  if (!hostAllowed) fail("forbidden-host", 403, { detail: `Not a host name of this server: ${hostname}.` });

  const origin = request.headers.get("origin");
  const listed = origin !== null && (rules.allowedOrigins ?? []).includes(origin);
  if (listed) return origin;
  if (origin !== null) {
    let sameOrigin = false;
    try {
      sameOrigin = origin !== "null" && new URL(origin).host.toLowerCase() === host.toLowerCase();
    } catch {
      sameOrigin = false;
    }
    if (!sameOrigin) fail("forbidden-origin", 403, { detail: "Another site's page may not call this server." });
  }
  const site = request.headers.get("sec-fetch-site");
  if (site === "cross-site" || (site === "same-site" && origin === null)) {
    fail("forbidden-origin", 403, { detail: "Another site's page may not call this server." });
  }
  return null;
}

/** The CORS headers of an answer to a listed origin. */
export function corsHeaders(origin: string | null): Record<string, string> {
  if (origin === null) return {};
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": "retry-after, content-type",
    vary: "Origin",
  };
}

/** The answer to a CORS preflight from a listed origin. */
export function preflight(origin: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(origin),
      "access-control-allow-methods": "GET, POST, PATCH, DELETE, OPTIONS",
      "access-control-allow-headers": "authorization, content-type, last-event-id",
      "access-control-max-age": "600",
    },
  });
}
