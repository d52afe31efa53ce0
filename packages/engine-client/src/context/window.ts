import type { ModelInfo } from "../messages.js";

/** The window assumed for a model API that does not say: 128K tokens. */
export const defaultApiWindow = 128_000;

/** The window assumed for a server on this computer that does not say: 8K tokens. */
export const defaultLocalWindow = 8_000;

/** Provider kinds that run on this computer. */
export const localProviderKinds: readonly string[] = [
  "ollama",
  "lmstudio",
  "lm-studio",
  "llamacpp",
  "llama.cpp",
  "local",
];

/** Where a window came from: the model list, a refusal that named one, or a default. */
export type WindowSource = "model" | "remembered" | "default-api" | "default-local";

/** Input of {@link resolveWindow}. */
export interface WindowInput {
  /** The model as the provider's list describes it; its `context` is the window. Default: unknown. */
  readonly model?: Pick<ModelInfo, "context" | "local" | "provider"> | null;
  /** A window named in an earlier refusal for this model; wins when smaller. Default: none. */
  readonly remembered?: number | null;
  /** Whether the server runs on this computer. Default: `model.local`, else judged from `baseURL` and `model.provider`. */
  readonly local?: boolean;
  /** The provider's address, to tell a server on this computer (loopback host). Default: none. */
  readonly baseURL?: string;
}

/** The window to plan with. */
export interface ResolvedWindow {
  /** Tokens. */
  readonly window: number;
  readonly source: WindowSource;
}

function isPositiveCount(value: number | null | undefined): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}

/**
 * Whether a host name is this computer: `localhost`, `*.localhost`, 127.0.0.0/8, `::1`, `0.0.0.0`, `::`,
 * and IPv4-mapped loopback (`::ffff:127.0.0.1`, which `URL` writes as `::ffff:7f00:1`).
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "::1" || name === "0:0:0:0:0:0:0:1" || name === "0.0.0.0" || name === "::") return true;
  if (/^::ffff:(?:127\.|7f[0-9a-f]{2}:)/.test(name)) return true;
  return /^127(?:\.\d{1,3}){3}$/.test(name);
}

/** Whether a provider runs on this computer: a loopback `baseURL` or a local provider kind. */
export function isLocalServer(server: { readonly baseURL?: string; readonly provider?: string }): boolean {
  if (server.provider !== undefined && localProviderKinds.includes(server.provider.toLowerCase())) return true;
  if (server.baseURL === undefined) return false;
  try {
    return isLoopbackHost(new URL(server.baseURL).hostname);
  } catch {
    return false;
  }
}

/**
 * The model's window: `ModelInfo.context` when the provider gives it; otherwise {@link defaultApiWindow}
 * for a model API and {@link defaultLocalWindow} for a server on this computer. A window remembered from a
 * refusal wins when it is smaller.
 */
export function resolveWindow(input: WindowInput): ResolvedWindow {
  const model = input.model ?? null;
  let resolved: ResolvedWindow;
  if (isPositiveCount(model?.context)) resolved = { window: Math.floor(model.context), source: "model" };
  else {
    const local =
      input.local ??
      (model?.local === true ||
        isLocalServer({
          ...(input.baseURL !== undefined && { baseURL: input.baseURL }),
          ...(model?.provider !== undefined && { provider: model.provider }),
        }));
    resolved = local
      ? { window: defaultLocalWindow, source: "default-local" }
      : { window: defaultApiWindow, source: "default-api" };
  }
  if (isPositiveCount(input.remembered) && input.remembered < resolved.window) {
    return { window: Math.floor(input.remembered), source: "remembered" };
  }
  return resolved;
}
