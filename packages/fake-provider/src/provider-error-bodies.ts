import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { testFixturesPath } from "./test-fixtures.js";

/** One real refusal body from `test-fixtures/refusals/bodies.json`. */
export interface ProviderErrorEntry {
  /** Position in bodies.json, from 0: a stable id for tests and `refuseNext`. */
  readonly index: number;
  /** The provider the body came from (`openai`, ..., or another id such as `google-vertex`). */
  readonly provider: string;
  /** Whether the body is a "too long" refusal. */
  readonly kind: "too-long" | "not-too-long";
  /** The HTTP status it came with; `null` when the source did not show it. */
  readonly status: number | null;
  /** The body, verbatim (JSON, a Python repr, a log line, ...). */
  readonly body: string;
  /** The window the body names; `null` when it names none. */
  readonly window: number | null;
  readonly source: string;
  readonly note: string;
}

/** Where the bodies live: `test-fixtures/refusals/bodies.json` (see its README). */
export const providerErrorBodiesURL = pathToFileURL(testFixturesPath("refusals", "bodies.json"));

let cached: readonly ProviderErrorEntry[] | undefined;

/** Loads the real refusal bodies (Node only), each with its `index`. Read once, then cached. */
export function loadProviderErrorBodies(): readonly ProviderErrorEntry[] {
  if (cached) return cached;
  const parsed: unknown = JSON.parse(readFileSync(providerErrorBodiesURL, "utf8"));
  if (!Array.isArray(parsed)) throw new Error(`${providerErrorBodiesURL.href} is not a JSON array`);
  cached = parsed.map((entry: Record<string, unknown>, index): ProviderErrorEntry => {
    const { provider, kind, status, body, window, source, note } = entry;
    if (typeof provider !== "string" || typeof body !== "string" || (kind !== "too-long" && kind !== "not-too-long")) {
      throw new Error(`bodies.json entry ${index} is malformed`);
    }
    return {
      index,
      provider,
      kind,
      status: typeof status === "number" ? status : null,
      body,
      window: typeof window === "number" ? window : null,
      source: typeof source === "string" ? source : "",
      note: typeof note === "string" ? note : "",
    };
  });
  return cached;
}

/** The first "too long" body of a provider that came with an HTTP error status, for replaying as a refusal. */
export function firstTooLongBody(provider: string): ProviderErrorEntry {
  const entries = loadProviderErrorBodies();
  const found =
    entries.find((entry) => entry.provider === provider && entry.kind === "too-long" && (entry.status ?? 400) >= 400) ??
    entries.find((entry) => entry.provider === provider && entry.kind === "too-long");
  if (!found) throw new Error(`bodies.json has no too-long body for ${provider}`);
  return found;
}
