import { EngineClientError } from "@conch/engine-client";

/**
 * Nacre's errors, in the engine's style (`EngineClientError`): a stable `name` and `isInstance`, which works across
 * bundles and copies of the package where `instanceof` would not.
 */

/** A compound part or a hook used outside the provider it reads (a programming mistake, thrown while rendering). */
export class NacreOutsideProviderError extends EngineClientError {
  /** What was used: `<Composer.Input>`, or `this hook`. */
  readonly used: string;
  /** What it must be inside, or be given instead. */
  readonly provider: string;
  constructor(used: string, provider: string) {
    super({ name: "NacreOutsideProviderError", message: `Nacre: ${used} must be inside ${provider}` });
    this.used = used;
    this.provider = provider;
  }
  static override isInstance(error: unknown): error is NacreOutsideProviderError {
    return EngineClientError.isNamed(error, "NacreOutsideProviderError");
  }
}
