/**
 * Whether a base URL points at this computer (a loopback host): `localhost` and `*.localhost`,
 * `127.0.0.0/8`, `::1` and `0.0.0.0`. Such a server gets the small default window and is never asked to
 * load a second model for summaries. A URL that does not parse is not local.
 */
export function isLocalBaseURL(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (host === "::1" || host === "0:0:0:0:0:0:0:1" || host === "0.0.0.0" || host === "::") return true;
  if (/^::ffff:(127\.|7f[0-9a-f]{2}:)/.test(host)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
