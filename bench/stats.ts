/** The median of numbers (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Rounds to a number of decimals, for JSON and tables. */
export function round(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}

/** A share from 0 to 1 as a percentage text. */
export function percent(share: number, decimals = 1): string {
  return `${(share * 100).toFixed(decimals)}%`;
}

/** A number with thousands separators. */
export function grouped(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** The `share` percentile (0.95 for p95) by the nearest rank; NaN when empty. */
export function percentile(values: readonly number[], share: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(share * sorted.length)));
  return sorted[rank - 1] as number;
}
