// Per-person limits the host sets: turns per minute and input tokens per day, over sliding windows of buckets.

/** What one person may use. Absent fields have no limit. */
export interface PersonLimits {
  readonly turnsPerMinute?: number;
  readonly inputTokensPerDay?: number;
}

const minute = 60_000;
const day = 24 * 60 * minute;

export interface LimitCounter {
  /** Seconds until `userId` may start a turn (0: now). `tokensOnly` skips the turn count (a fold on request). */
  retryAfter(userId: string, options?: { readonly tokensOnly?: boolean }): number;
  /** Counts a started turn (kept only when the person has a turn limit). */
  countTurn(userId: string): void;
  /** Counts input tokens a turn or fold used (kept only when the person has a token limit). */
  countTokens(userId: string, tokens: number): void;
  /** How many buckets it holds, over every person: bounded by the windows, whatever was counted. */
  held(): number;
}

/** A sliding window as buckets: a minute of seconds for turns, a day of quarter hours for tokens. */
interface WindowShape {
  readonly spanMs: number;
  readonly bucketMs: number;
}
const turnWindow: WindowShape = { spanMs: minute, bucketMs: 1000 };
const tokenWindow: WindowShape = { spanMs: day, bucketMs: 15 * minute };

interface Bucket {
  readonly start: number;
  amount: number;
}

/**
 * Oldest first. What a bucket holds is aged from the bucket's start, so it leaves the window at most one bucket early
 * (a second of a minute, a quarter hour of a day), and a wait is never longer than the window.
 */
function trimmed(buckets: Bucket[], shape: WindowShape, at: number): Bucket[] {
  let first = 0;
  while (first < buckets.length && (buckets[first] as Bucket).start <= at - shape.spanMs) first++;
  if (first > 0) buckets.splice(0, first);
  return buckets;
}

/** Milliseconds until the window's sum is under `limit` (0 when it is). */
function waitUnder(buckets: readonly Bucket[], shape: WindowShape, limit: number, at: number): number {
  let used = buckets.reduce((sum, bucket) => sum + bucket.amount, 0);
  let waitMs = 0;
  // The time when enough of the oldest use has left the window to be under the limit again.
  for (const bucket of buckets) {
    if (used < limit) break;
    used -= bucket.amount;
    waitMs = Math.max(waitMs, bucket.start + shape.spanMs - at);
  }
  return waitMs;
}

/** Counts in this process (one instance); `limitsFor` may give each person their own. */
export function createLimitCounter(
  limits: PersonLimits | ((userId: string) => PersonLimits) | undefined,
  now: () => number = Date.now,
): LimitCounter {
  const turns = new Map<string, Bucket[]>();
  const tokens = new Map<string, Bucket[]>();
  const limitsOf = (userId: string): PersonLimits => (typeof limits === "function" ? limits(userId) : (limits ?? {}));

  /** The person's buckets in the window now; a person with none left is forgotten. */
  function current(counts: Map<string, Bucket[]>, shape: WindowShape, userId: string, at: number): Bucket[] {
    const buckets = trimmed(counts.get(userId) ?? [], shape, at);
    if (buckets.length === 0) counts.delete(userId);
    return buckets;
  }

  function add(counts: Map<string, Bucket[]>, shape: WindowShape, userId: string, amount: number): void {
    const at = now();
    const buckets = current(counts, shape, userId, at);
    const start = at - (at % shape.bucketMs);
    const last = buckets[buckets.length - 1];
    if (last?.start === start) last.amount += amount;
    else buckets.push({ start, amount });
    counts.set(userId, buckets);
  }

  return {
    retryAfter(userId, options) {
      const limit = limitsOf(userId);
      const at = now();
      let waitMs = 0;
      if (limit.turnsPerMinute !== undefined && !options?.tokensOnly) {
        const recent = current(turns, turnWindow, userId, at);
        waitMs = Math.max(waitMs, waitUnder(recent, turnWindow, limit.turnsPerMinute, at));
      }
      if (limit.inputTokensPerDay !== undefined) {
        const recent = current(tokens, tokenWindow, userId, at);
        waitMs = Math.max(waitMs, waitUnder(recent, tokenWindow, limit.inputTokensPerDay, at));
      }
      return waitMs <= 0 ? 0 : Math.max(1, Math.ceil(waitMs / 1000));
    },
    countTurn(userId) {
      if (limitsOf(userId).turnsPerMinute === undefined) return;
      add(turns, turnWindow, userId, 1);
    },
    countTokens(userId, used) {
      if (used <= 0 || limitsOf(userId).inputTokensPerDay === undefined) return;
      add(tokens, tokenWindow, userId, used);
    },
    held() {
      let count = 0;
      for (const buckets of [...turns.values(), ...tokens.values()]) count += buckets.length;
      return count;
    },
  };
}
