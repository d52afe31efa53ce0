/**
 * The one rule every Root follows inside a conversation: a prop the caller passes wins, and a prop left out
 * or passed as `undefined` means "the conversation's own" (`null` is a value: "none"). A plain spread would
 * let `summary={undefined}` blank out the conversation's summary, which is why every Root reads through this.
 */
export function preferPassed<Props extends object, Own extends object>(props: Props, own: Own): Props & Own {
  const merged: Record<string, unknown> = { ...(own as Record<string, unknown>) };
  for (const [key, value] of Object.entries(props)) {
    if (value !== undefined || !(key in own)) merged[key] = value;
  }
  return merged as Props & Own;
}
