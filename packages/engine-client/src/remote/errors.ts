import { EngineClientError, hasMarker, markerFor } from "../errors.js";
import type { WireProblem } from "../protocol/wire.js";

const remoteSymbol = markerFor("RemoteEngineError");

/** The server refused a request (its `application/problem+json`), or answered what the protocol does not say. */
export class RemoteEngineError extends EngineClientError {
  readonly [remoteSymbol] = true;
  /** The HTTP status (0 when the answer was not HTTP's: a stream that broke for good). */
  readonly status: number;
  /** The server's problem, when it sent one. */
  readonly problem: WireProblem | null;
  constructor({ status, problem, message }: { status: number; problem: WireProblem | null; message?: string }) {
    super({
      name: "RemoteEngineError",
      message:
        message ?? (problem ? `${problem.title}${problem.detail ? `: ${problem.detail}` : ""}` : `HTTP ${status}`),
    });
    this.status = status;
    this.problem = problem;
  }
  static override isInstance(error: unknown): error is RemoteEngineError {
    return EngineClientError.isInstance(error) && hasMarker(error, remoteSymbol);
  }
}
