// Per-person limits the host sets: turns per minute and input tokens per day, over sliding windows.

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
  /** Counts a started turn. */
  countTurn(userId: string): void;
  /** Counts input tokens a turn or fold used. */
  countTokens(userId: string, tokens: number): void;
}

/** Counts in this process (one instance); `limitsFor` may give each person their own. */
export function createLimitCounter(
  limits: PersonLimits | ((userId: string) => PersonLimits) | undefined,
  now: () => number = Date.now,
): LimitCounter {
  const turns = new Map<string, number[]>();
  const tokens = new Map<string, { at: number; tokens: number }[]>();
  const limitsOf = (userId: string): PersonLimits => (typeof limits === "function" ? limits(userId) : (limits ?? {}));

  return {
    retryAfter(userId, options) {
      const limit = limitsOf(userId);
      const at = now();
      let waitMs = 0;
      if (limit.turnsPerMinute !== undefined && !options?.tokensOnly) {
        const recent = (turns.get(userId) ?? []).filter((time) => time > at - minute);
        turns.set(userId, recent);
        if (recent.length >= limit.turnsPerMinute) {
          const oldest = recent[recent.length - limit.turnsPerMinute] ?? at;
          waitMs = Math.max(waitMs, oldest + minute - at);
        }
      }
      if (limit.inputTokensPerDay !== undefined) {
        const recent = (tokens.get(userId) ?? []).filter((entry) => entry.at > at - day);
        tokens.set(userId, recent);
        let used = recent.reduce((sum, entry) => sum + entry.tokens, 0);
        // The time when enough of the oldest use has left the window to be under the limit again.
        for (const entry of recent) {
          if (used < limit.inputTokensPerDay) break;
          used -= entry.tokens;
          waitMs = Math.max(waitMs, entry.at + day - at);
        }
      }
      return waitMs === 0 ? 0 : Math.max(1, Math.ceil(waitMs / 1000));
    },
    countTurn(userId) {
      turns.set(userId, [...(turns.get(userId) ?? []), now()]);
    },
    countTokens(userId, used) {
      if (used <= 0) return;
      tokens.set(userId, [...(tokens.get(userId) ?? []), { at: now(), tokens: used }]);
    },
  };
}
