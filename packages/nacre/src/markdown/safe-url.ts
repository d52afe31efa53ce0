/** The only schemes a model-written link may use. */
const allowedSchemes = new Set(["http:", "https:", "mailto:"]);

/**
 * The URL itself when it is an absolute `http(s):` or `mailto:` URL, else null: `javascript:`, `data:`,
 * `vbscript:`, relative paths (which would act on the host app) and anything unparsable are refused.
 */
export function safeUrl(url: string): string | null {
  const trimmed = url.trim();
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return null;
  }
  return allowedSchemes.has(parsed.protocol) ? trimmed : null;
}
