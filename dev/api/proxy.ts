// Forwards the page's provider calls to the provider (Node only), adding the key here, so that no key ever
// reaches the page. Streams the answer through as it arrives.
import type { IncomingMessage, ServerResponse } from "node:http";

/** Request headers the page may pass on; everything else (cookies, origin, the page's own auth) stays here. */
const forwardedRequestHeaders = ["accept", "content-type", "anthropic-version", "anthropic-beta"];

/** Response headers that must not be copied (hop by hop, re-encoded by fetch, or meant for another origin). */
const droppedResponseHeaders = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-encoding",
  "content-length",
  "set-cookie",
  "strict-transport-security",
  "alt-svc",
]);

/** The whole request body. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export interface ForwardOptions {
  /** The provider's base URL; the request's path (after `/provider`) and query are appended. */
  readonly target: string;
  readonly body: Buffer;
  /** The key's headers (added here, never seen by the page). */
  readonly auth: Readonly<Record<string, string>>;
}

/** Sends `req` on to the provider and streams its answer back; a 502 in OpenAI's error shape when it cannot. */
export async function forward(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): Promise<void> {
  const url = `${options.target}${req.url ?? "/"}`;
  const headers: Record<string, string> = { "accept-encoding": "identity" };
  for (const name of forwardedRequestHeaders) {
    const value = req.headers[name];
    if (typeof value === "string") headers[name] = value;
  }
  Object.assign(headers, options.auth);
  const controller = new AbortController();
  // The page stopped reading (Stop, a closed tab): stop the provider's call too.
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  let upstream: Response;
  try {
    upstream = await fetch(url, {
      method: req.method ?? "GET",
      headers,
      ...(options.body.length > 0 && req.method !== "GET" && req.method !== "HEAD"
        ? { body: new Uint8Array(options.body) }
        : {}),
      redirect: "manual",
      signal: controller.signal,
    });
  } catch (error) {
    if (controller.signal.aborted) return;
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why = typeof cause?.code === "string" ? cause.code : String(cause?.message ?? error);
    res.writeHead(502, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        error: { message: `The dev server could not reach ${new URL(url).origin}: ${why}`, type: "proxy_error" },
      }),
    );
    return;
  }
  const responseHeaders: Record<string, string> = {};
  upstream.headers.forEach((value, name) => {
    if (!droppedResponseHeaders.has(name) && !name.startsWith("access-control-")) responseHeaders[name] = value;
  });
  res.writeHead(upstream.status, responseHeaders);
  if (!upstream.body) {
    res.end();
    return;
  }
  try {
    for await (const chunk of upstream.body) {
      if (res.destroyed) return;
      res.write(chunk);
    }
  } catch {
    // The provider broke the stream: break ours too, so the page meets the same failure.
    res.destroy();
    return;
  }
  res.end();
}
