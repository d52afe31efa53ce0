import type { EngineEvent } from "../events.js";

/** The marker a secret is replaced by in everything the handler sends. */
export const redactedMarker = "[redacted]";

/** `text` with every whole secret replaced by the marker. */
export function redactWhole(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(redactedMarker);
  return result;
}

/**
 * How short a start of a secret at a delta's end goes out at once: a key's first few characters ("sk-") are
 * common in text and say nothing of the key, and holding them back would move most deltas' ends. The rest of a
 * secret whose start went out is still caught: it goes out as the marker.
 */
const shortestHeld = 4;

type DeltaEvent = Extract<EngineEvent, { type: "text-delta" | "thinking-delta" }>;

interface StreamState {
  /** Text not sent yet (a possible start of a secret). */
  held: string;
  /** The end of what was sent (shorter than the longest secret): where a secret may have started. */
  sent: string;
  /** The event the held text came with, for its id-less fields. */
  event: DeltaEvent;
}

/**
 * `text` (what comes after `sent`) with every secret that lies in it, wholly or with its start already in
 * `sent`, replaced by the marker; and how much of its end to hold back: the part in `text` of the longest end of
 * `sent + text` that is a secret's start (at least {@link shortestHeld} characters, or begun in `sent`).
 */
function redactAfter(sent: string, text: string, secrets: readonly string[]): { text: string; hold: number } {
  let out = "";
  let index = 0;
  const window = sent + text;
  // Scan `text` for secrets, each possibly begun in `sent`.
  while (index < text.length) {
    let matched = 0;
    for (const secret of secrets) {
      // Only a secret at the very start of `text` can have begun in `sent`.
      for (let begun = index === 0 ? Math.min(sent.length, secret.length - 1) : 0; begun >= 0; begun--) {
        const from = sent.length + index - begun;
        if (window.startsWith(secret, from)) {
          matched = Math.max(matched, secret.length - begun);
          break;
        }
      }
    }
    if (matched > 0) {
      out += redactedMarker;
      index += matched;
    } else {
      out += text[index];
      index += 1;
    }
  }
  // What may still become a secret: the end of `sent + out` that starts a secret.
  const tail = sent + out;
  let hold = 0;
  for (const secret of secrets) {
    for (let length = Math.min(secret.length - 1, tail.length); length > hold; length--) {
      if (!tail.endsWith(secret.slice(0, length))) continue;
      const inOut = Math.min(length, out.length);
      const begunInSent = length > out.length;
      if ((length >= shortestHeld || begunInSent) && inOut > hold) hold = inOut;
      break;
    }
  }
  return { text: out, hold };
}

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
  const streams = new Map<string, StreamState>();
  const longest = Math.max(0, ...secrets.map((secret) => secret.length));
  const streamOf = (event: DeltaEvent) => `${event.type}:${event.seq}`;

  function flushExcept(keep: string | null): EngineEvent[] {
    const out: EngineEvent[] = [];
    for (const [stream, state] of streams) {
      if (stream === keep) continue;
      streams.delete(stream);
      if (state.held !== "") out.push({ ...state.event, delta: state.held });
    }
    return out;
  }

  return {
    push(event) {
      if (secrets.length === 0) return [event];
      if (event.type !== "text-delta" && event.type !== "thinking-delta") return [...flushExcept(null), event];
      const stream = streamOf(event);
      const out = flushExcept(stream);
      const state = streams.get(stream) ?? { held: "", sent: "", event };
      const redacted = redactAfter(state.sent, state.held + event.delta, secrets);
      const sending = redacted.text.slice(0, redacted.text.length - redacted.hold);
      state.held = redacted.text.slice(redacted.text.length - redacted.hold);
      state.sent = (state.sent + sending).slice(-Math.max(0, longest - 1));
      state.event = event;
      streams.set(stream, state);
      if (sending !== "") out.push({ ...event, delta: sending });
      return out;
    },
    flush: () => flushExcept(null),
  };
}
