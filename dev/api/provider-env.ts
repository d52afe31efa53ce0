// Which provider `pnpm dev` talks to, from NACRE_* environment variables (Node only). The key stays in this
// process: the page only ever sees the provider's kind, where it is, and the model names.
import type { ProviderId } from "@conch/engine-client";
import { isLocalBaseURL, isProviderId, openAICompatibleRows } from "@conch/engine-client/providers";

/** A provider named by the environment. */
export interface OwnProvider {
  /** The adapter row. */
  readonly provider: ProviderId;
  /** A name for people. */
  readonly name: string;
  /**
   * Where the dev server forwards `/provider/*`: the base URL as given, or for a local server with endpoints of
   * its own beside its OpenAI-style API (llama.cpp's `/props`, LM Studio's `/api/v1`, Ollama's `/api`) its root.
   */
  readonly baseURL: string;
  /** What the page adds to `/provider` to reach the API: `/v1` when `baseURL` is such a server's root, else "". */
  readonly apiPath: string;
  /** Sent by the dev server only, as the provider expects it; never given to the page. */
  readonly apiKey?: string;
  readonly model?: string;
  /** The summariser's first choice; "" turns the row's own default off. */
  readonly cheapestModel?: string;
  /** The small model; "" turns the row's own default off. */
  readonly smallModel?: string;
  readonly local: boolean;
}

/** The variables `pnpm dev` reads. */
export const envNames = {
  provider: "NACRE_PROVIDER",
  baseURL: "NACRE_BASE_URL",
  apiKey: "NACRE_API_KEY",
  model: "NACRE_MODEL",
  cheapModel: "NACRE_CHEAP_MODEL",
} as const;

const fixedDefaults: Readonly<
  Record<string, { readonly baseURL: string; readonly local: boolean; readonly name: string }>
> = {
  anthropic: { baseURL: "https://api.anthropic.com/v1", local: false, name: "Anthropic" },
  google: { baseURL: "https://generativelanguage.googleapis.com/v1beta", local: false, name: "Google Gemini" },
  ollama: { baseURL: "http://127.0.0.1:11434", local: true, name: "Ollama" },
};

function defaultsOf(provider: ProviderId): { baseURL: string; local: boolean; name: string } {
  const fixed = fixedDefaults[provider];
  if (fixed) return fixed;
  const row = openAICompatibleRows[provider as keyof typeof openAICompatibleRows];
  return { baseURL: row.defaultBaseURL, local: row.localKind, name: row.displayName };
}

/**
 * Local servers whose own endpoints sit at the root beside their OpenAI-style API, and the path the page adds:
 * the address may be given with or without `/v1` (as their own documentation gives it either way).
 */
const servedUnderV1: Readonly<Record<string, string>> = {
  "llama.cpp": "/v1",
  lmstudio: "/v1",
  vllm: "/v1",
  ollama: "",
};

function serverRootFor(provider: ProviderId, baseURL: string): string {
  return provider in servedUnderV1 ? baseURL.replace(/\/v1$/, "") : baseURL;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * Reads NACRE_PROVIDER (`openai-compatible`, `anthropic`, `ollama`, or any adapter row id), NACRE_BASE_URL,
 * NACRE_API_KEY, NACRE_MODEL and NACRE_CHEAP_MODEL. Null when NACRE_PROVIDER is unset or `fake` (then `pnpm
 * dev` starts its fake provider). Throws on a value it cannot use, naming the variable.
 */
export function readProviderEnv(env: Readonly<Record<string, string | undefined>>): OwnProvider | null {
  const kind = nonEmpty(env[envNames.provider])?.toLowerCase();
  if (kind === undefined || kind === "fake") return null;
  const provider = kind === "openai-compatible" ? "openai" : kind;
  if (!isProviderId(provider)) {
    throw new Error(
      `${envNames.provider}=${kind} is not a provider this page knows. Use openai-compatible, anthropic or ollama ` +
        "(or an adapter row: openai, openrouter, groq, mistral, deepseek, xai, together, vllm, llama.cpp, lmstudio, zhipu, google), or leave it unset for the fake provider.",
    );
  }
  const defaults = defaultsOf(provider);
  const given = nonEmpty(env[envNames.baseURL]);
  if (kind === "openai-compatible" && given === undefined) {
    throw new Error(
      `${envNames.provider}=openai-compatible needs ${envNames.baseURL} (for example https://api.openai.com/v1).`,
    );
  }
  const baseURL = serverRootFor(provider, (given ?? defaults.baseURL).replace(/\/+$/, ""));
  const apiPath = provider in servedUnderV1 ? (servedUnderV1[provider] as string) : "";
  let parsed: URL;
  try {
    parsed = new URL(baseURL);
  } catch {
    throw new Error(`${envNames.baseURL}=${baseURL} is not a URL.`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`${envNames.baseURL} must be an http(s) URL (got ${parsed.protocol}).`);
  }
  if (parsed.username || parsed.password) {
    throw new Error(`${envNames.baseURL} must not carry credentials; put the key in ${envNames.apiKey}.`);
  }
  const apiKey = nonEmpty(env[envNames.apiKey]);
  const model = nonEmpty(env[envNames.model]);
  const cheap = nonEmpty(env[envNames.cheapModel]);
  // Another server than the provider's own may not have the row's well-known cheap models.
  const ownServer = baseURL === serverRootFor(provider, defaults.baseURL.replace(/\/+$/, ""));
  const local = defaults.local || isLocalBaseURL(baseURL);
  const where = ownServer ? "" : ` at ${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  return {
    provider,
    apiPath,
    name: `${kind === "openai-compatible" ? "OpenAI-compatible server" : defaults.name}${where}`,
    baseURL,
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(cheap !== undefined ? { cheapestModel: cheap } : ownServer ? {} : { cheapestModel: "", smallModel: "" }),
    local,
  };
}

/** The headers that carry the key, as the provider expects it. */
export function authHeaders(own: Pick<OwnProvider, "provider" | "apiKey">): Record<string, string> {
  if (own.apiKey === undefined) return {};
  switch (own.provider) {
    case "anthropic":
      return { "x-api-key": own.apiKey };
    case "google":
      return { "x-goog-api-key": own.apiKey };
    default:
      return { authorization: `Bearer ${own.apiKey}` };
  }
}

/** An IndexedDB name per provider and server, so chats of different setups never mix. */
export function databaseNameFor(own: Pick<OwnProvider, "provider" | "baseURL">): string {
  const url = new URL(own.baseURL);
  const where = `${url.host}${url.pathname}`.replace(/[^a-zA-Z0-9.-]+/g, "-").replace(/-+$/, "");
  return `nacre-dev-${own.provider}-${where}`;
}
