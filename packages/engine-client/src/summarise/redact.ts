/**
 * Secrets are replaced with a marker before anything is sent to a summariser (or kept in a summary):
 * a summary is read every turn by whichever model the chat moves to, so a key in it would travel far.
 */

/** What a secret is replaced with. */
export const redactedMarker = "[redacted secret]";

interface SecretPattern {
  readonly kind: string;
  readonly pattern: RegExp;
  /** Builds the replacement from the match; default: the marker. */
  readonly replace?: (match: string, ...groups: string[]) => string;
}

// Order matters: whole blocks and structured forms first, so that a key inside a block is not cut in two.
const secretPatterns: readonly SecretPattern[] = [
  {
    kind: "private key block",
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  {
    kind: "password in a URL",
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#@]+):([^\s@/?#]+)@/gi,
    replace: (_match, scheme, user) => `${scheme}${user}:${redactedMarker}@`,
  },
  { kind: "JWT", pattern: /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/g },
  { kind: "Anthropic key", pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { kind: "OpenAI key", pattern: /\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: "Google OAuth token", pattern: /\bya29\.[0-9A-Za-z_-]{20,}/g },
  { kind: "AWS access key id", pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[0-9A-Z]{16}\b/g },
  { kind: "GitHub token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/g },
  { kind: "Slack token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: "Slack webhook", pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g },
  { kind: "Stripe key", pattern: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{16,}/g },
  {
    kind: "bearer token",
    pattern: /\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{8,}/g,
    replace: (_match, scheme, space) => `${scheme}${space}${redactedMarker}`,
  },
  {
    // key = value, key: value, "key": "value", KEY=value in env files and URLs' query strings.
    kind: "secret in a key=value pair",
    pattern:
      /((?:["']?)\b[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)["']?\s*(?:=|:|=>)\s*)(\[redacted secret\]|"[^"\n]{4,}"|'[^'\n]{4,}'|[^\s"',;&)}\]]{4,})/gi,
    replace: (match, key: string, value: string) => {
      const bare = value.replace(/^["']|["']$/g, "");
      // Counts and settings are not secrets: max_tokens=1600, token: 4096, password: required.
      if (
        /^\d+$/.test(bare) ||
        /^(?:true|false|null|none|required|optional|string|number|\*+|\[redacted secret\])$/i.test(bare)
      ) {
        return match;
      }
      if (bare.includes(redactedMarker)) return match;
      // References to where a secret lives are not the secret: process.env.API_KEY, ${TOKEN}, $TOKEN.
      if (
        /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[["'][\w-]+["']\])+$/.test(bare) ||
        /^\$\{?[A-Z_][A-Z0-9_]*\}?$/.test(bare)
      ) {
        return match;
      }
      const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : "";
      return `${key}${quote}${redactedMarker}${quote}`;
    },
  },
];

/** The kinds of secret `redactSecrets` recognises, for documentation and tests. */
export const redactedSecretKinds: readonly string[] = secretPatterns.map((entry) => entry.kind);

/**
 * Replaces API keys of the common providers (OpenAI, Anthropic, Google, AWS, GitHub, Slack, Stripe),
 * bearer tokens, JWTs, private key blocks, passwords in URLs and in `key=value` pairs with
 * `[redacted secret]`. Everything else is left as it is.
 */
export function redactSecrets(text: string): string {
  let result = text;
  for (const { pattern, replace } of secretPatterns) {
    pattern.lastIndex = 0;
    result = replace
      ? result.replace(pattern, (match: string, ...groups: unknown[]) => replace(match, ...(groups as string[])))
      : result.replace(pattern, redactedMarker);
  }
  return result;
}
