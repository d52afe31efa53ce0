import { isLocalServer } from "../context/window.js";

/**
 * Whether a base URL points at this computer (a loopback host: `localhost`, 127.0.0.0/8, `::1`, ...), which
 * makes its server "local" by default: unknown windows default to 8K, and only the chat's own model summarises.
 */
export function isLocalBaseURL(url: string): boolean {
  return isLocalServer({ baseURL: url });
}
