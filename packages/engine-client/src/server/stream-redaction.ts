import type { EngineEvent } from "../events.js";

/** The marker a secret is replaced by in everything the handler sends. */
export const redactedMarker = "[redacted]";

/** `text` with every whole secret replaced by the marker. */
export function redactWhole(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(redactedMarker);
  return result;
}

/** The length of the longest end of `text` that is the start of a secret (shorter than the secret). */
function heldLength(text: string, secrets: readonly string[]): number {
  let longest = 0;
  for (const secret of secrets) {
    for (let length = Math.min(secret.length - 1, text.length); length > longest; length--) {
      if (text.endsWith(secret.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

type DeltaEvent = Extract<EngineEvent, { type: "text-delta" | "thinking-delta" }>;

/**
 * Redacts the host's secrets from a turn's events as they stream. A secret in the model's words comes in several
 * deltas, each of which passes a whole-text check: so the end of each delta that could be the start of a secret
 * (at most the longest secret's length − 1 characters) is held back, and goes out with the next delta of the same
 * text, or before the next other event, once it is known to be no secret. With no secrets nothing is held.
 */
export function createStreamRedactor(secrets: readonly string[]): {
  /** The events to record in place of `event` (none while a delta is wholly held back). */
  push(event: EngineEvent): EngineEvent[];
  /** What is still held back, as deltas: before a `turn-end` the turn's own pump writes. */
  flush(): EngineEvent[];
} {
  const held = new Map<string, DeltaEvent>();
  const streamOf = (event: DeltaEvent) => `${event.type}:${event.seq}`;

  function flushExcept(keep: string | null): EngineEvent[] {
    const out: EngineEvent[] = [];
    for (const [stream, event] of held) {
      if (stream === keep) continue;
      held.delete(stream);
      out.push(event);
    }
    return out;
  }

  return {
    push(event) {
      if (secrets.length === 0) return [event];
      if (event.type !== "text-delta" && event.type !== "thinking-delta") return [...flushExcept(null), event];
      const stream = streamOf(event);
      const out = flushExcept(stream);
      const text = redactWhole((held.get(stream)?.delta ?? "") + event.delta, secrets);
      const hold = heldLength(text, secrets);
      if (hold > 0) held.set(stream, { ...event, delta: text.slice(text.length - hold) });
      else held.delete(stream);
      if (hold < text.length) out.push({ ...event, delta: text.slice(0, text.length - hold) });
      return out;
    },
    flush: () => flushExcept(null),
  };
}
