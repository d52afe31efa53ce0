import { EngineClientError, hasMarker, markerFor } from "../errors.js";
import type { TurnProblem } from "../problems.js";
import type { TooLongRefusal } from "./recognise-too-long.js";

const providerCallSymbol = markerFor("ProviderCallError");

/** What a failed provider call carries. */
export interface ProviderCallErrorOptions {
  readonly provider: string;
  readonly model?: string;
  readonly problem: TurnProblem;
  readonly tooLong?: TooLongRefusal | null;
  readonly status?: number;
  readonly responseBody?: string;
  readonly afterOutput?: boolean;
  readonly cause?: unknown;
}

/**
 * A provider call that failed: every non-OK response, malformed body, broken stream, network failure or
 * timeout maps to this one type. Aborts are never wrapped: they pass through as the AbortError.
 *
 * For a "too long" refusal, `problem.kind` is `too-long` and `tooLong` says what the refusal named. The
 * problem's `next` step is then a placeholder (`new-chat` with an empty message): only the engine knows
 * the ready models and the person's message, so it replaces `next` before showing the problem.
 */
export class ProviderCallError extends EngineClientError {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read through the marker symbol by isInstance.
  private readonly [providerCallSymbol] = true;
  /** The row id (`openai`, `anthropic`, ...). */
  readonly provider: string;
  /** The model of the call, when it was a chat call. */
  readonly model?: string;
  /** The problem to show, by kind. */
  readonly problem: TurnProblem;
  /** The "too long" refusal, or `null` when the failure is something else. */
  readonly tooLong: TooLongRefusal | null;
  /** The HTTP status, when a response came. */
  readonly statusCode?: number;
  /** The response body as received (truncated to 64 KB), when there was one. */
  readonly responseBody?: string;
  /**
   * Whether any of the answer (text, thinking or a tool call) had already been streamed. A quiet retry is
   * only allowed when it had not.
   */
  readonly afterOutput: boolean;

  constructor(options: ProviderCallErrorOptions) {
    super({
      name: "ProviderCallError",
      message: `${options.provider}: ${options.problem.title}${
        options.problem.providerMessage ? `: ${options.problem.providerMessage}` : ""
      }`,
      cause: options.cause,
    });
    this.provider = options.provider;
    if (options.model !== undefined) this.model = options.model;
    this.problem = options.problem;
    this.tooLong = options.tooLong ?? null;
    if (options.status !== undefined) this.statusCode = options.status;
    if (options.responseBody !== undefined) this.responseBody = options.responseBody;
    this.afterOutput = options.afterOutput ?? false;
  }

  /** The HTTP status (an alias of `statusCode`, named as the TurnProblem names it). */
  get status(): number | undefined {
    return this.statusCode;
  }

  /** Whether the same request may succeed if sent again later (network, rate limit, server trouble). */
  get isRetryable(): boolean {
    const problem = this.problem;
    switch (problem.kind) {
      case "offline":
      case "rate-limited":
        return true;
      case "provider-error": {
        // A client error (4xx) will fail the same way again; a server error or a broken stream may not.
        const status = this.statusCode;
        return status === undefined || status < 400 || status === 408 || status === 409 || status >= 500;
      }
      case "too-long":
      case "auth":
      case "quota":
      case "model-unavailable":
      case "refused":
        return false;
      default:
        return problem satisfies never;
    }
  }

  /** A copy that records that output had already been streamed. */
  withAfterOutput(afterOutput: boolean): ProviderCallError {
    if (afterOutput === this.afterOutput) return this;
    return new ProviderCallError({
      provider: this.provider,
      ...(this.model !== undefined && { model: this.model }),
      problem: this.problem,
      tooLong: this.tooLong,
      ...(this.statusCode !== undefined && { status: this.statusCode }),
      ...(this.responseBody !== undefined && { responseBody: this.responseBody }),
      afterOutput,
      cause: this.cause,
    });
  }

  /** Whether `error` is a ProviderCallError from any copy of this package. */
  static override isInstance(error: unknown): error is ProviderCallError {
    return EngineClientError.isInstance(error) && hasMarker(error, providerCallSymbol);
  }
}
