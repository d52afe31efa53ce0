/**
 * The text of a refusal body, whatever its envelope: every string field of a JSON body (nested, and JSON or a
 * Python repr relayed inside a string, as gateways do), or the raw text, each part on one line.
 */

const maxDepth = 6;
/** A body larger than this is read by its head: refusals are short, and a runaway body must not cost seconds. */
const maxChars = 64 * 1024;

/** Undoes the escapes a relayed body carries (`\"`, `\'`, `\n`) and folds whitespace to single spaces. */
export function foldText(raw: string): string {
  return raw
    .replace(/\\+(["'`])/g, "$1")
    .replace(/\\+[nrt]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** The first balanced `{…}` or `[…]` at or after `from`, honouring quoted strings; `null` when none closes. */
function balancedFrom(text: string, from: number): { start: number; end: number } | null {
  const start = text.slice(from).search(/[{[]/);
  if (start < 0) return null;
  const open = from + start;
  let depth = 0;
  let quote: string | null = null;
  for (let index = open; index < text.length; index += 1) {
    const char = text[index];
    if (quote) {
      if (char === "\\") index += 1;
      else if (char === quote) quote = null;
      continue;
    }
    if (char === '"') quote = char;
    else if (char === "{" || char === "[") depth += 1;
    else if (char === "}" || char === "]") {
      depth -= 1;
      if (depth === 0) return { start: open, end: index + 1 };
    }
  }
  return null;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function collect(value: unknown, parts: string[], depth: number): void {
  if (depth > maxDepth || parts.length > 200) return;
  if (typeof value === "string") {
    parts.push(value);
    collectEmbedded(value, parts, depth + 1);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) collect(item, parts, depth + 1);
    return;
  }
  if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) collect(item, parts, depth + 1);
  }
}

/** JSON embedded in a string (`Error code: 400 - {"error":…}`, `b'{…}'`): its string fields become parts too. */
function collectEmbedded(text: string, parts: string[], depth: number): void {
  let from = 0;
  for (let found = 0; found < 8; found += 1) {
    const span = balancedFrom(text, from);
    if (!span) return;
    const candidate = text.slice(span.start, span.end);
    const parsed = tryParse(candidate) ?? tryParse(candidate.replace(/\\(["'])/g, "$1"));
    if (parsed !== undefined && typeof parsed === "object") collect(parsed, parts, depth);
    from = span.end;
  }
}

/**
 * The body as text for a classifier: the folded raw text first (numbers in non-string fields, such as
 * `"n_ctx":8192`, stay readable), then every string field found inside it, joined by ` | ` (a boundary no
 * sentence crosses).
 */
export function refusalText(body: unknown): string {
  const parts: string[] = [];
  if (typeof body === "string") {
    const head = body.length > maxChars ? body.slice(0, maxChars) : body;
    parts.push(head);
    const parsed = tryParse(head.trim());
    if (parsed !== undefined) collect(parsed, parts, 1);
    else collectEmbedded(head, parts, 1);
  } else {
    let raw: string;
    try {
      raw = JSON.stringify(body) ?? "";
    } catch {
      raw = String(body);
    }
    parts.push(raw.length > maxChars ? raw.slice(0, maxChars) : raw);
    collect(body, parts, 1);
  }
  const folded = parts.map(foldText).filter((part) => part !== "");
  return [...new Set(folded)].join(" | ");
}
