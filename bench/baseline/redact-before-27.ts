/**
 * THE BASELINE, NOT THE LIBRARY: `redactSecrets` as it was before issue #27 (copied from main at b846a35),
 * kept only so that `pnpm bench` measures the new rules beside the old ones in one run. Never imported by
 * a package.
 *
 * Secrets are replaced with a marker before anything is sent to a summariser (or kept in a summary):
 * a summary is read every turn by whichever model the chat moves to, so a key in it would travel far.
 *
 * Two kinds of rule. Formats that name themselves (`secret-formats.ts`: a prefix or shape no ordinary text
 * has) are redacted wherever they are. Anything else is redacted only where the context says a secret is
 * there (a key named like a secret, a URL's password, an `Authorization` header, "my password is …") and the
 * value looks like one. The value goes; the key and the sentence stay.
 */
import { secretFormats } from "./secret-formats-before-27.js";

/** What a secret is replaced with. */
export const redactedMarker = "[redacted secret]";

/** Bits of information per character (Shannon entropy of the character distribution). */
function entropyPerChar(value: string): number {
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const share = count / value.length;
    bits -= share * Math.log2(share);
  }
  return bits;
}

/** Where a secret lives, not the secret: `process.env.API_KEY`, `${TOKEN}`, `getKey()`, `config["token"]`. */
function isReference(value: string): boolean {
  return (
    value.includes("(") ||
    /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[["'][\w-]+["']\])+$/.test(value) ||
    /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(value) ||
    /^%[A-Z_]+%$/.test(value)
  );
}

/** A stand-in people write where the secret goes: `<your-key>`, `xxxx`, `***`, `changeme`, `your_api_key_here`. */
function isPlaceholder(value: string): boolean {
  return (
    /^<[^>]*>$|^\{\{[^}]*\}\}$|^[x*•.]{3,}$|^(?:true|false|null|nil|none|undefined|required|optional|string|number|boolean|secret|password|token|redacted|hidden|changeme|example)$/i.test(
      value,
    ) ||
    /^your[_-]|[_-]here$/i.test(value) ||
    value.includes("[redacted")
  );
}

/**
 * Whether a value looks machine-made rather than a word or a number: long enough, more than one kind of
 * character, and dense in information. Words, counts, paths of words and settings are not.
 */
export function looksRandom(value: string): boolean {
  if (value.length < 8 || isReference(value) || isPlaceholder(value)) return false;
  if (/^\d+(?:\.\d+)?$/.test(value)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((kind) => kind.test(value)).length;
  if (classes < 2) return false;
  // One capitalised word or a hyphenated phrase of words is prose: "Instrument", "skip-navigation-menu".
  if (/^[A-Za-z][a-z]+(?:[-_ /.][A-Za-z][a-z]*)*$/.test(value)) return false;
  return entropyPerChar(value) >= (value.length >= 20 ? 3.2 : 2.6);
}

/** A password-like value: any value a person chose, but not prose, a count, a reference or a placeholder. */
function looksLikePassword(value: string, assigned: boolean): boolean {
  if (value.length < 4 || isReference(value) || isPlaceholder(value) || /^\d{1,6}$/.test(value)) return false;
  // `password: must be at least 8 characters` is a sentence about passwords; `PASSWORD=letmein` is one.
  if (!assigned && /^[a-z]+$/.test(value)) return false;
  return true;
}

const secretKey = `[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key|signing[_-]?key|credentials?|session[_-]?key)[A-Za-z0-9_.-]*`;
const passwordKey = /pass(?:word|wd|phrase)|pwd|secret/i;
const secretWord =
  /password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key|signing[_-]?key|credentials?|session[_-]?key/gi;

/** Whether the secret word in a key ends a part of it: `auth_token`, `apiKey`, `SECRET`, never `tokenizer`. */
function isSecretKeyName(key: string): boolean {
  for (const match of key.matchAll(secretWord)) {
    const next = key[(match.index ?? 0) + match[0].length];
    const last = match[0][match[0].length - 1] ?? "";
    if (next === undefined || /[_.\-0-9]/.test(next) || (/[a-z]/.test(last) && /[A-Z]/.test(next))) return true;
  }
  return false;
}

// `key = value`, `key: value`, `"key": "value"`, `KEY=value` (env files, query strings, JSON, YAML, code).
const keyValuePattern = new RegExp(
  String.raw`((?<![A-Za-z0-9_])["']?(${secretKey})["']?[ \t]*(=>|:=|=|:)[ \t]*)(\[redacted secret\]|"[^"\n]*"|'[^'\n]*'|\x60[^\x60\n]*\x60|[^\s"',;&)}\]]+)`,
  "gi",
);

function redactKeyValue(match: string, prefix: string, key: string, operator: string, value: string): string {
  if (!isSecretKeyName(key)) return match;
  const quote = /^["'`]/.test(value) ? value[0] : "";
  // A bare value at the end of a sentence keeps its full stop: `…_ON_BUILD=false.`
  const trailing = quote ? "" : (/[.!?:]+$/.exec(value)?.[0] ?? "");
  const bare = quote ? value.slice(1, -1) : value.slice(0, value.length - trailing.length);
  const assigned = quote !== "" || (operator !== ":" && !/\s$/.test(prefix));
  const secret = passwordKey.test(key) ? looksLikePassword(bare, assigned) : looksRandom(bare);
  return secret ? `${prefix}${quote}${redactedMarker}${quote}${trailing}` : match;
}

// `Authorization: Bearer x`, `X-Api-Key: x`, and a scheme and credential anywhere (`Bearer x`, `Basic x`).
const headerPattern =
  /\b((?:Proxy-)?Authorization|X-Api-Key|Api-Key|X-Goog-Api-Key|X-Auth-Token)(["']?\s*[:=]\s*["']?)((?:Bearer|Basic|Token|Digest|Bot)\s+)?([^\s"',]+)/gi;
const schemePattern = /\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9._~+/=-]{8,})/g;

// `scheme://user:password@host`, the user optional (`redis://:password@host`).
const urlCredentialPattern = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#@]*):([^\s@/?#]+)@/gi;

// "my password is hunter2", "the API key for staging is …": the value after a person's own words.
const proseSecretPattern =
  /\b((?:my|the|our|your|his|her|their) (?:[\w-]+ ){0,2}?(?:password|passphrase|passcode|pin|api key|secret key|token)(?: for [\w .@-]{1,30}?)? (?:is|was|=|:) ["'“]?)([^\s"'”]+?)(?=["'”]?(?:[\s,;!?]|\.(?:\s|$)|$))/gi;
const proseStopwords =
  /^(?:not|too|the|a|an|being|still|now|set|wrong|incorrect|correct|fine|empty|missing|required|expired|invalid|here|below|above|in|on|at|stored|saved|in)$/i;

// AWS secret access key: 40 characters of base64 near an AWS context (a key id, `aws`, `secret`).
const awsSecretPattern =
  /(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
const awsContext = /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\baws\b|aws_|secret/i;

function redactAwsSecrets(text: string): string {
  return text.replace(awsSecretPattern, (value, offset: number) => {
    const around = text.slice(Math.max(0, offset - 200), offset + 240);
    return awsContext.test(around) && looksRandom(value) ? redactedMarker : value;
  });
}

/** The kinds of secret `redactSecrets` recognises, for documentation and tests. */
export const redactedSecretKinds: readonly string[] = [
  ...secretFormats.map((format) => format.kind),
  "AWS secret access key (near an AWS key id)",
  "password in a URL",
  "Authorization header",
  "bearer or basic credential",
  "secret in a key=value pair or JSON field",
  "a password or key in a sentence",
];

/**
 * Replaces secrets with `[redacted secret]`: the self-naming formats of the common services (model
 * providers, clouds, code hosts, chat and payment services, private keys, JWTs), and values that look like
 * secrets where the context says one is there. Keys, sentences and everything else stay as they are.
 */
export function redactSecrets(text: string): string {
  let result = redactAwsSecrets(text);
  for (const { pattern } of secretFormats) {
    pattern.lastIndex = 0;
    result = result.replace(pattern, redactedMarker);
  }
  result = result.replace(urlCredentialPattern, (match, scheme: string, user: string, password: string) =>
    password.includes(redactedMarker) || isReference(password) ? match : `${scheme}${user}:${redactedMarker}@`,
  );
  result = result.replace(headerPattern, (match, name: string, separator: string, scheme = "", value: string) =>
    value.length >= 8 && !isReference(value) && !isPlaceholder(value)
      ? `${name}${separator}${scheme}${redactedMarker}`
      : match,
  );
  result = result.replace(schemePattern, (match, scheme: string, space: string, value: string) =>
    looksRandom(value) ? `${scheme}${space}${redactedMarker}` : match,
  );
  result = result.replace(keyValuePattern, redactKeyValue);
  result = result.replace(proseSecretPattern, (match, words: string, value: string) =>
    proseStopwords.test(value) || isPlaceholder(value) || value.length < 4 ? match : `${words}${redactedMarker}`,
  );
  return result;
}
