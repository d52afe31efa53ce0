// Per-person bounds the server keeps whatever the host sets: how much one person may hold open at once.

/** What one person may hold at once, and start in a minute. Past any of them: 429 with `Retry-After`. */
export interface PersonBounds {
  /** Turns running at once (on different chats), in this process. Default 8. */
  readonly concurrentTurns?: number;
  /** Event streams open at once (turn streams and `GET /events`), in this process. Default 32. */
  readonly openStreams?: number;
  /** Turns started a minute (a refused attempt, such as a 409, is not counted). Default 120. */
  readonly turnsPerMinute?: number;
}

/** The bounds when the host sets none: no person in ordinary use meets them. */
export const defaultPersonBounds: Required<PersonBounds> = { concurrentTurns: 8, openStreams: 32, turnsPerMinute: 120 };

/** Seconds a client is told to wait when a bound on what is open is met: until something of theirs ends. */
export const heldBoundRetryAfter = 2;

export type HeldKind = "turns" | "streams";

/** Counts what each person holds open; a person holding nothing is not kept. */
export interface BoundCounter {
  /** A place for one more, and how to give it back (idempotent); null at the bound. */
  take(userId: string, kind: HeldKind): (() => void) | null;
}

export function createBoundCounter(bounds: Required<PersonBounds> | null): BoundCounter {
  const held = new Map<string, { turns: number; streams: number }>();
  const limitOf = (kind: HeldKind) => (kind === "turns" ? bounds?.concurrentTurns : bounds?.openStreams);
  return {
    take(userId, kind) {
      const limit = limitOf(kind) ?? Number.POSITIVE_INFINITY;
      const counts = held.get(userId) ?? { turns: 0, streams: 0 };
      if (counts[kind] >= limit) return null;
      counts[kind] += 1;
      held.set(userId, counts);
      let given = false;
      return () => {
        if (given) return;
        given = true;
        counts[kind] -= 1;
        if (counts.turns === 0 && counts.streams === 0 && held.get(userId) === counts) held.delete(userId);
      };
    },
  };
}
