import type { z } from "zod";
import { isAbortError, ProviderCallError } from "../errors.js";
import type { ModelInfo } from "../messages.js";
import { fetchJson, type Transport } from "./http.js";
import { isLocalBaseURL } from "./local-base-url.js";
import type { ListModelsOptions, ProviderSettings, ProviderStreamPart } from "./provider-adapter.js";
import { createRememberedWindows, type RememberedWindows, smallerWindow } from "./remembered-windows.js";

/** A model as a provider's list describes it, before remembered windows are applied. */
export interface ListedModel {
  readonly id: string;
  readonly displayName?: string | undefined;
  /** The window the model runs with, when the list says it. */
  readonly context?: number | undefined;
  readonly ready: boolean;
}

/** What a model-list reader may call. */
export interface ModelListContext {
  /** The adapter's base URL. */
  readonly baseURL: string;
  /** GETs a URL and checks the JSON with a schema; failures throw ProviderCallError. */
  get<T>(url: string, schema: z.ZodType<T>): Promise<T>;
  /** POSTs JSON and checks the answer with a schema; failures throw ProviderCallError. */
  post<T>(url: string, body: unknown, schema: z.ZodType<T>): Promise<T>;
  /** Like `get`, but `undefined` on any failure other than an abort (for optional endpoints). */
  tryGet<T>(url: string, schema: z.ZodType<T>): Promise<T | undefined>;
}

/** A model-list context over one transport. */
export function createModelListContext(
  transport: Transport,
  baseURL: string,
  options: ListModelsOptions = {},
): ModelListContext {
  const common = { phase: "list" as const, abortSignal: options.abortSignal, timeoutMs: options.timeoutMs };
  const get = <T>(url: string, schema: z.ZodType<T>) => fetchJson(transport, { ...common, url }, schema);
  return {
    baseURL,
    get,
    post: (url, body, schema) => fetchJson(transport, { ...common, url, body }, schema),
    async tryGet(url, schema) {
      try {
        return await get(url, schema);
      } catch (error) {
        if (options.abortSignal?.aborted || (isAbortError(error) && !ProviderCallError.isInstance(error))) throw error;
        return undefined;
      }
    },
  };
}

/** The base URL without trailing slashes. */
export function resolveBaseURL(settings: ProviderSettings, fallback: string): string {
  return (settings.baseURL ?? fallback).replace(/\/+$/, "");
}

/**
 * The base URL of a local server whose OpenAI-style API is under `/v1` beside its own endpoints (llama.cpp,
 * LM Studio, vLLM), given with or without `/v1`: a bare server address (no path) gets `/v1`; any other path (a
 * proxy's) is kept as given.
 */
export function withV1Path(baseURL: string): string {
  try {
    const url = new URL(baseURL);
    return url.pathname === "/" || url.pathname === "" ? `${baseURL.replace(/\/+$/, "")}/v1` : baseURL;
  } catch {
    return baseURL;
  }
}

/** The base URL of Ollama's own API, given with or without the `/v1` of its OpenAI-style one: without it. */
export function withoutV1Path(baseURL: string): string {
  return baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/**
 * Whether an adapter is local: the settings say so, or the provider kind runs locally, or the host is loopback.
 * A base URL on the page's own origin is the page's server passing calls on (a same-origin proxy): its host says
 * where the page came from, not where the provider runs, so only the kind counts there.
 */
export function resolveLocal(settings: ProviderSettings, localKind: boolean, baseURL: string): boolean {
  return settings.local ?? (localKind || (isLocalBaseURL(baseURL) && !isOnPageOrigin(baseURL)));
}

function isOnPageOrigin(url: string): boolean {
  const origin = (globalThis as { readonly location?: { readonly origin?: unknown } }).location?.origin;
  if (typeof origin !== "string" || origin === "null") return false;
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

/** The remembered windows of an adapter. */
export function resolveWindows(settings: ProviderSettings): RememberedWindows {
  return settings.rememberedWindows ?? createRememberedWindows();
}

/**
 * A tool call's arguments as an object, for providers that take an object rather than JSON text (Anthropic,
 * Gemini, Ollama): `{}` when the model wrote something that is not a JSON object.
 */
export function toolArgumentsObject(argumentsText: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Not JSON: sent as an empty object.
  }
  return {};
}

/** A positive whole number, or undefined (lists carry nulls, zeros and placeholders). */
export function positiveWindow(value: number | null | undefined): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Listed models as ModelInfo: ids deduplicated (first wins), remembered windows applied (smaller wins). */
export function toModelInfos(
  provider: string,
  local: boolean,
  windows: RememberedWindows,
  listed: readonly ListedModel[],
): ModelInfo[] {
  const seen = new Set<string>();
  const infos: ModelInfo[] = [];
  for (const model of listed) {
    if (seen.has(model.id)) continue;
    seen.add(model.id);
    const context = smallerWindow(model.context, windows.get(provider, model.id));
    infos.push({
      id: model.id,
      displayName: model.displayName || model.id,
      ...(context !== undefined && { context }),
      ready: model.ready,
      local,
      provider,
    });
  }
  return infos;
}

/** Passes a stream through, remembering the window a "too long" refusal names before rethrowing it. */
export async function* rememberingRefusals(
  provider: string,
  model: string,
  windows: RememberedWindows,
  parts: AsyncIterable<ProviderStreamPart>,
): AsyncGenerator<ProviderStreamPart> {
  try {
    yield* parts;
  } catch (error) {
    if (ProviderCallError.isInstance(error) && error.tooLong?.window !== undefined) {
      windows.remember(provider, model, error.tooLong.window);
    }
    throw error;
  }
}
