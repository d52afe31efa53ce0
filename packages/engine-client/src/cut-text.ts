/**
 * Cuts a text to at most `maxUnits` UTF-16 code units without splitting a surrogate pair: a lone
 * surrogate is not text, and a provider or a summariser may refuse it (or show a replacement character).
 */
export function cutAtCodePoint(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return text;
  let cut = Math.max(0, Math.floor(maxUnits));
  const last = text.charCodeAt(cut - 1);
  if (cut > 0 && last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return text.slice(0, cut);
}

/** The same, with an ellipsis when something was cut. */
export function cutWithEllipsis(text: string, maxUnits: number): string {
  return text.length <= maxUnits ? text : `${cutAtCodePoint(text, maxUnits)}…`;
}
