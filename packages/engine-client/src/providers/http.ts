import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { z } from "zod";
import { abortReason } from "../abort.js";
import { isAbortError, ProviderCallError } from "../errors.js";
import {
  malformedProblem,
  offlineProblem,
  type ProviderCallPhase,
  problemFromResponse,
  withoutSecrets,
} from "./map-provider-problem.js";
import type { ProviderSettings } from "./provider-adapter.js";

/** Five minutes: a local model can think that long over a big prompt before its first byte. */
export const defaultTimeoutMs = 300_000;
const maximumKeptBody = 64 * 1024;

/** What every call of one adapter shares. */
export interface Transport {
  readonly provider: string;
  readonly fetch: typeof globalThis.fetch;
  /** Headers on every call (auth and the settings' own). */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** The key, redacted from every error body and message before either is cut (a provider may echo it). */
  readonly secrets: readonly string[];
}

/** A transport from an adapter's settings; `authHeaders` says how this provider takes its key. */
export function createTransport(
  provider: string,
  settings: ProviderSettings,
  authHeaders: Readonly<Record<string, string>>,
): Transport {
  const customFetch = settings.fetch;
  return {
    provider,
    // Looked up per call, and never called as a method of the settings (browsers throw "Illegal invocation").
    fetch: customFetch ?? ((input, init) => globalThis.fetch(input, init)),
    headers: { ...authHeaders, ...settings.headers },
    timeoutMs: settings.timeoutMs ?? defaultTimeoutMs,
    secrets: settings.apiKey && settings.apiKey.length >= 4 ? [settings.apiKey] : [],
  };
}

/** One request to send. */
export interface CallTarget {
  readonly url: string;
  readonly method?: "GET" | "POST";
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly abortSignal?: AbortSignal | undefined;
  readonly timeoutMs?: number | undefined;
  readonly phase: ProviderCallPhase;
  readonly model?: string;
}

/** An OK response whose body is read under the call's idle timeout. */
export interface OpenCall {
  readonly response: Response;
  /** The body as text pieces; each wait for a piece has the idle timeout. */
  chunks(): AsyncGenerator<string>;
  /** The whole body as text (kept up to 64 KB). */
  text(): Promise<string>;
  /** Any error met while the call was open, as a ProviderCallError, or the AbortError on abort. */
  failure(error: unknown, afterOutput: boolean): unknown;
  /** A ProviderCallError for a body that is not what the API promises (after a "too long" check). */
  unexpected(body: string, why: string, afterOutput: boolean): ProviderCallError;
  /**
   * A ProviderCallError for an error the provider sent inside an OK response (an SSE `error` event, an
   * `error` object, a finish reason); `code` is the status the body names, when it names one.
   */
  errorInBody(body: string, code: number | undefined, afterOutput: boolean): ProviderCallError;
  /** A ProviderCallError for a stream that ended before the answer was complete (or before it started). */
  incomplete(why: string, afterOutput: boolean): ProviderCallError;
  /** Stops the timer and forgets the caller's signal. Safe to call twice. */
  close(): void;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined;
    return typeof code === "string" ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}

/**
 * Sends a request and returns the OK response, or throws: a ProviderCallError for an error status,
 * a network failure or a timeout; the AbortError when the caller's signal aborts.
 */
export async function openCall(transport: Transport, target: CallTarget): Promise<OpenCall> {
  const { provider } = transport;
  const userSignal = target.abortSignal;
  if (userSignal?.aborted) throw abortReason(userSignal);
  const timeoutMs = target.timeoutMs ?? transport.timeoutMs;
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onUserAbort = () => controller.abort(abortReason(userSignal as AbortSignal));
  userSignal?.addEventListener("abort", onUserAbort, { once: true });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException(`No answer within ${timeoutMs} ms`, "TimeoutError"));
    }, timeoutMs);
  };
  const disarm = () => clearTimeout(timer);
  const close = () => {
    disarm();
    userSignal?.removeEventListener("abort", onUserAbort);
  };
  const model = target.model;
  const failure = (error: unknown, afterOutput: boolean): unknown => {
    if (userSignal?.aborted) return abortReason(userSignal);
    if (ProviderCallError.isInstance(error)) return error.withAfterOutput(afterOutput || error.afterOutput);
    if (timedOut) {
      return new ProviderCallError({
        provider,
        ...(model !== undefined && { model }),
        problem: offlineProblem(`${provider} sent nothing for ${timeoutMs} ms`),
        afterOutput,
        cause: error,
      });
    }
    if (isAbortError(error)) return error;
    const networkFailure = error instanceof TypeError || (error as { name?: unknown } | null)?.name === "TypeError";
    return new ProviderCallError({
      provider,
      ...(model !== undefined && { model }),
      problem: networkFailure
        ? offlineProblem(`Could not reach ${provider}: ${describe(error)}`)
        : malformedProblem(`${provider}: ${describe(error)}`),
      afterOutput,
      cause: error,
    });
  };

  async function* chunks(response: Response): AsyncGenerator<string> {
    const reader = response.body?.getReader();
    if (!reader) return;
    const decoder = new TextDecoder();
    let finished = false;
    try {
      for (;;) {
        arm();
        const { done, value } = await reader.read();
        disarm();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        if (text) yield text;
      }
      finished = true;
      const rest = decoder.decode();
      if (rest) yield rest;
    } finally {
      disarm();
      // Stopping early (a break, an abort, a failure) must release the connection.
      if (!finished) await reader.cancel().catch(() => {});
    }
  }

  async function readText(response: Response): Promise<string> {
    let text = "";
    for await (const piece of chunks(response)) {
      if (text.length < maximumKeptBody) text += piece;
    }
    return withoutSecrets(text, transport.secrets).slice(0, maximumKeptBody);
  }

  let response: Response;
  try {
    arm();
    response = await transport.fetch(target.url, {
      method: target.method ?? (target.body === undefined ? "GET" : "POST"),
      headers: {
        ...(target.body !== undefined && { "content-type": "application/json" }),
        ...transport.headers,
        ...target.headers,
      },
      ...(target.body !== undefined && { body: JSON.stringify(target.body) }),
      signal: controller.signal,
    });
    disarm();
  } catch (error) {
    close();
    throw failure(error, false);
  }

  if (!response.ok) {
    let body = "";
    try {
      body = await readText(response);
    } catch (error) {
      close();
      throw failure(error, false);
    }
    close();
    const { problem, tooLong } = problemFromResponse({
      provider,
      status: response.status,
      body,
      headers: response.headers,
      phase: target.phase,
      secrets: transport.secrets,
    });
    throw new ProviderCallError({
      provider,
      ...(model !== undefined && { model }),
      problem,
      tooLong,
      status: response.status,
      responseBody: body,
    });
  }

  const ok = response;
  return {
    response: ok,
    chunks: () => chunks(ok),
    text: () => readText(ok),
    failure,
    unexpected(body, why, afterOutput) {
      const kept = withoutSecrets(body, transport.secrets).slice(0, maximumKeptBody);
      const mapped = problemFromResponse({ provider, status: ok.status, body: kept, phase: target.phase });
      // An error object inside a 200 is the provider's refusal; anything else is a malformed body.
      const isError = mapped.tooLong !== null || /["']?error["']?\s*[:=]/i.test(kept);
      return new ProviderCallError({
        provider,
        ...(model !== undefined && { model }),
        problem: isError ? mapped.problem : malformedProblem(`${why}: ${kept.slice(0, 200)}`, ok.status),
        tooLong: mapped.tooLong,
        status: ok.status,
        responseBody: kept,
        afterOutput,
      });
    },
    errorInBody(body, code, afterOutput) {
      const kept = withoutSecrets(body, transport.secrets).slice(0, maximumKeptBody);
      const status = code !== undefined && code >= 400 && code <= 599 ? code : undefined;
      const mapped = problemFromResponse({ provider, status, body: kept, phase: target.phase });
      return new ProviderCallError({
        provider,
        ...(model !== undefined && { model }),
        problem: mapped.problem,
        tooLong: mapped.tooLong,
        status: status ?? ok.status,
        responseBody: kept,
        afterOutput,
      });
    },
    incomplete(why, afterOutput) {
      return new ProviderCallError({
        provider,
        ...(model !== undefined && { model }),
        problem: malformedProblem(why, ok.status),
        status: ok.status,
        afterOutput,
      });
    },
    close,
  };
}

/** Sends a GET (or a POST with `body`) and returns the parsed, schema-checked JSON. */
export async function fetchJson<T>(transport: Transport, target: CallTarget, schema: z.ZodType<T>): Promise<T> {
  const call = await openCall(transport, target);
  try {
    const text = await call.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw call.unexpected(text, `${transport.provider} sent a body that is not JSON`, false);
    }
    const checked = schema.safeParse(parsed);
    if (!checked.success) {
      throw call.unexpected(
        text,
        `${transport.provider} sent an unexpected body (${checked.error.issues[0]?.message})`,
        false,
      );
    }
    return checked.data;
  } catch (error) {
    throw call.failure(error, false);
  } finally {
    call.close();
  }
}

/** Server-sent events of an open call, parsed by eventsource-parser. */
export interface SseReader {
  events(): AsyncGenerator<EventSourceMessage>;
  /** How many events came. */
  readonly eventCount: number;
  /** The first 64 KB of the body, for a body that held no event at all (an error sent as plain JSON). */
  readonly rawText: string;
}

/**
 * The largest one event (or one NDJSON line) may grow: a stream line that never ends must fail, not fill
 * the heap, and the idle timeout never fires while bytes keep coming. Real events are kilobytes.
 */
export const maximumEventChars = 8 * 1024 * 1024;

function eventTooLarge(call: OpenCall, afterOutput: boolean): ProviderCallError {
  return call.incomplete(
    `one stream event grew past ${maximumEventChars / 1024 / 1024} MB without ending`,
    afterOutput,
  );
}

/** Reads an open call's body as server-sent events. */
export function readSse(call: OpenCall): SseReader {
  let eventCount = 0;
  let rawText = "";
  return {
    get eventCount() {
      return eventCount;
    },
    get rawText() {
      return rawText;
    },
    async *events() {
      const pending: EventSourceMessage[] = [];
      // Characters fed since the parser last ended an event (or a comment line): the event being built.
      let sinceEvent = 0;
      const parser = createParser({
        onEvent: (event) => {
          pending.push(event);
          sinceEvent = 0;
        },
        onComment: () => {
          sinceEvent = 0;
        },
      });
      for await (const piece of call.chunks()) {
        if (rawText.length < maximumKeptBody) rawText += piece;
        sinceEvent += piece.length;
        if (sinceEvent > maximumEventChars) throw eventTooLarge(call, eventCount > 0);
        parser.feed(piece);
        while (pending.length > 0) {
          eventCount += 1;
          yield pending.shift() as EventSourceMessage;
        }
      }
      // A last event without its blank line is still an event; a cut-off one fails to parse later.
      parser.reset({ consume: true });
      while (pending.length > 0) {
        eventCount += 1;
        yield pending.shift() as EventSourceMessage;
      }
    },
  };
}

/**
 * Reads an open call's body as newline-delimited JSON lines (Ollama). Each piece is searched for newlines once:
 * the unfinished line is only appended to, never searched again, so a long line costs its length, not its
 * length times its pieces.
 */
export async function* readLines(call: OpenCall): AsyncGenerator<string> {
  let unfinished = "";
  let lines = 0;
  for await (const piece of call.chunks()) {
    let start = 0;
    let newline = piece.indexOf("\n");
    while (newline >= 0) {
      const line = (unfinished + piece.slice(start, newline)).trim();
      unfinished = "";
      start = newline + 1;
      if (line) {
        lines += 1;
        yield line;
      }
      newline = piece.indexOf("\n", start);
    }
    unfinished += piece.slice(start);
    if (unfinished.length > maximumEventChars) throw eventTooLarge(call, lines > 0);
  }
  if (unfinished.trim()) yield unfinished.trim();
}

/** Joins a base URL and a path with exactly one slash. */
export function joinURL(baseURL: string, path: string): string {
  return `${baseURL.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/** A unique-enough id for a tool call the provider did not name (Ollama, Gemini). */
export function generatedCallId(prefix: string): string {
  const random =
    globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  return `${prefix}_${random.replace(/-/g, "").slice(0, 24)}`;
}

/** Parses one JSON event or line, or throws the call's "unexpected body" error. */
export function parseJsonOrFail(call: OpenCall, text: string, afterOutput: boolean): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw call.unexpected(text, "The stream held a piece that is not JSON", afterOutput);
  }
}
