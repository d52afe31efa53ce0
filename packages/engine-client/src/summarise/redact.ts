/**
 * Secrets are replaced with a marker before anything is sent to a summariser (or kept in a summary):
 * a summary is read every turn by whichever model the chat moves to, so a key in it would travel far.
 *
 * Two kinds of rule. Formats that name themselves (`secret-formats.ts`: a prefix or shape no ordinary text
 * has) are redacted wherever they are. Anything else is redacted only where the context says a secret is
 * there (a key named like a secret, a URL's password, an `Authorization` header, "my password is …") and the
 * value looks like one. The value goes; the key and the sentence stay.
 */
import { secretFormats } from "./secret-formats.js";

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

// The words that name a secret, in the languages people write to a chat: a key or field named with one of
// them holds a secret, and so does the value a sentence gives for one.
const secretWordList = [
  "password",
  "passwd",
  "passphrase",
  "passcode",
  "pwd",
  "pw",
  "pass",
  "secret",
  "token",
  "api[ _-]?key",
  "apikey",
  "access[ _-]?key",
  "private[ _-]?key",
  "auth[_-]?key",
  "signing[_-]?key",
  "credentials?",
  "session[_-]?key",
];
const secretWordSource = secretWordList.join("|");
const secretWord = new RegExp(secretWordSource, "gi");
const passwordKey =
  /pass(?:word|wd|phrase|code)?|pwd|\bpw\b|secret|contrase|clave|passe|passwort|kennwort|пароль|senha|密码|口令|パスワード|비밀번호|암호/i;

// A key as it is written in env, YAML, JSON (quoted, escaped inside a string, or with spaces: "API Key"),
// TOML and INI: a secret word ends one of its parts (`auth_token`, `apiKey`, `SECRET`, never `tokenizer`).
const keyChar = /[A-Za-z0-9_.-]/;
const operatorPattern = /[ \t]*(=>|:=|=|:|<-)[ \t]*/y;
// A quoted name with spaces before the secret word: `"API Key"`, `'Client Secret'`.
const spacedHead = /(\\?["'\x60])([A-Za-z][A-Za-z0-9 _.-]{0,30})$/;

interface KeyAt {
  readonly key: string;
  readonly keyStart: number;
  readonly quote: string;
  readonly operator: string;
  /** Where the value starts. */
  readonly valueFrom: number;
}

/**
 * The key around one secret word, as env, YAML, JSON (quoted, escaped inside a string, or with spaces),
 * TOML and INI write it, with its operator; `null` when the word is not in a key.
 */
function keyAround(text: string, wordStart: number, wordEnd: number): KeyAt | null {
  let start = wordStart;
  while (start > 0 && keyChar.test(text[start - 1] ?? "")) start -= 1;
  let end = wordEnd;
  while (end < text.length && keyChar.test(text[end] ?? "")) end += 1;
  let quote = "";
  const before = text[start - 1] ?? "";
  const spaced = before === " " ? spacedHead.exec(text.slice(Math.max(0, start - 34), start)) : null;
  if (spaced?.[1] && spaced[2] !== undefined && text.startsWith(spaced[1], end)) {
    quote = spaced[1];
    start -= spaced[2].length;
  } else if (/["'\x60]/.test(before)) {
    quote = text[start - 2] === "\\" ? `\\${before}` : before;
  } else if (/[A-Za-z0-9_\\/]/.test(before)) {
    return null;
  }
  if (quote) {
    if (!text.startsWith(quote, end)) return null;
    end += quote.length;
  }
  operatorPattern.lastIndex = end;
  const operator = operatorPattern.exec(text);
  if (!operator?.[1]) return null;
  if (!quote && operator[1] === "<-" && text[end] !== " ") return null;
  return {
    key: text.slice(start, end - quote.length),
    keyStart: start,
    quote,
    operator: operator[1],
    valueFrom: end + operator[0].length,
  };
}

/** Whether the secret word in a key ends a part of it: `auth_token`, `apiKey`, `SECRET`, `API Key`, never `tokenizer`. */
function isSecretKeyName(key: string): boolean {
  for (const match of key.matchAll(secretWord)) {
    const at = match.index ?? 0;
    const before = key[at - 1];
    const next = key[at + match[0].length];
    const last = match[0][match[0].length - 1] ?? "";
    // `pw` and `pass` count only as a whole part (`pw`, `db_pass`), never inside a word (`passenger`).
    if (
      /^(?:pw|pass)$/i.test(match[0]) &&
      before !== undefined &&
      /[a-z]/i.test(before) &&
      !/[A-Z]/.test(match[0][0] ?? "")
    )
      continue;
    if (next === undefined || /[_.\-0-9 ]/.test(next) || (/[a-z]/.test(last) && /[A-Z]/.test(next))) return true;
  }
  return false;
}

interface ValueSpan {
  readonly start: number;
  readonly end: number;
  readonly value: string;
  /** Quoted, or written as a setting (`KEY=value`): a lowercase word there is a password, not prose. */
  readonly assigned: boolean;
}

/** The closing quote of a quoted value, honouring backslash escapes; `-1` when the line ends first. */
function closingQuote(text: string, from: number, quote: string): number {
  for (let index = from; index < text.length; index += 1) {
    const char = text[index];
    if (char === "\n") return -1;
    if (quote.length === 2 && text.startsWith(quote, index)) return index;
    if (char === "\\" && quote.length === 1) {
      index += 1;
      continue;
    }
    if (char === quote) return index;
  }
  return -1;
}

/**
 * The value after `key:` / `key =`: on the next, deeper line (YAML, `|` and `>` blocks included), quoted (an
 * escaped quote inside JSON that is itself a string included), or bare. A bare value written as a setting at
 * the start of a line runs to the next space (`&`, `@`, `/`, `#` and quotes belong to it); inline (a query
 * string, code) it stops at the next separator.
 */
function valueAfter(text: string, from: number, keyStart: number, operator: string, quoted: string): ValueSpan | null {
  const lineStart = text.lastIndexOf("\n", keyStart - 1) + 1;
  const indent = /^[ \t]*/.exec(text.slice(lineStart))?.[0].length ?? 0;
  const rest = text.slice(from);
  const nextLine = /^(?:[|>][-+]?)?[ \t]*\r?\n([ \t]+)(\S[^\n]*)/.exec(rest);
  if (nextLine?.[1] !== undefined && nextLine[2] !== undefined && operator === ":" && nextLine[1].length > indent) {
    const start = from + nextLine[0].length - nextLine[2].length;
    const unquoted = /^(["'])(.*)\1\s*$/.exec(nextLine[2].trimEnd());
    const value = unquoted ? (unquoted[2] ?? "") : nextLine[2].trimEnd();
    const offset = unquoted ? 1 : 0;
    return { start: start + offset, end: start + offset + value.length, value, assigned: true };
  }
  const escapedQuote = quoted.length === 2 || rest.startsWith('\\"') ? (rest.startsWith('\\"') ? '\\"' : "") : "";
  const quote = escapedQuote || (/^["'\x60]/.test(rest) ? (rest[0] ?? "") : "");
  if (quote) {
    const close = closingQuote(text, from + quote.length, quote);
    if (close < 0) return null;
    return { start: from + quote.length, end: close, value: text.slice(from + quote.length, close), assigned: true };
  }
  const setting = /^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?$/.test(text.slice(lineStart, keyStart));
  const bare = (setting ? /^[^\s]+/ : /^[^\s"'\x60,;&)}\]<>]+/).exec(rest)?.[0];
  if (!bare) return null;
  // A bare value at the end of a sentence keeps its full stop: `…_ON_BUILD=false.`
  const trailing = /[.!?:,]+$/.exec(bare)?.[0] ?? "";
  const value = bare.slice(0, bare.length - trailing.length);
  // `password: must be at least 12 characters` is a sentence about passwords, `password: hunter2` a setting.
  const sentence = operator === ":" && /^[ \t]+[^\s#;]/.test(rest.slice(bare.length).split("\n")[0] ?? "");
  return { start: from, end: from + value.length, value, assigned: (setting || operator !== ":") && !sentence };
}

/** Replaces the value of every secret-named key that holds something secret-looking. */
function redactKeyValues(text: string): string {
  const spans: { start: number; end: number }[] = [];
  let lastValueFrom = -1;
  for (const word of text.matchAll(secretWord)) {
    const at = word.index ?? 0;
    const found = keyAround(text, at, at + word[0].length);
    // A key with two secret words (`secret_token`) is read once.
    if (!found || found.valueFrom === lastValueFrom) continue;
    lastValueFrom = found.valueFrom;
    const { key, keyStart, quote, operator, valueFrom } = found;
    if (!isSecretKeyName(key) || key.split(" ").length > 4) continue;
    const span = valueAfter(text, valueFrom, keyStart, operator, quote);
    if (!span || span.value.includes(redactedMarker)) continue;
    const secret = passwordKey.test(key) ? looksLikePassword(span.value, span.assigned) : looksRandom(span.value);
    if (secret) spans.push(span);
  }
  return replaceSpans(text, spans);
}

/** Replaces non-overlapping spans (in order) with the marker. */
function replaceSpans(text: string, spans: readonly { start: number; end: number }[]): string {
  if (spans.length === 0) return text;
  let out = "";
  let at = 0;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    if (span.start < at) continue;
    out += text.slice(at, span.start) + redactedMarker;
    at = span.end;
  }
  return out + text.slice(at);
}

// `Authorization: Bearer x`, `X-Api-Key: x`, and a scheme and credential anywhere (`Bearer x`, `Basic x`).
const headerPattern =
  /\b((?:Proxy-)?Authorization|X-Api-Key|Api-Key|X-Goog-Api-Key|X-Auth-Token)(["']?\s*[:=]\s*["']?)((?:Bearer|Basic|Token|Digest|Bot)\s+)?([^\s"',]+)/gi;
const schemePattern = /\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9._~+/=-]{8,})/g;

// `scheme://user:password@host`, the user optional (`redis://:password@host`); the password may hold `@`
// and `/`: it runs to the last `@` before the host.
const urlCredentialPattern =
  /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#@]*):(\S+)@(?=[A-Za-z0-9[][^\s@/]*(?:[/:?#\s"'`)]|$))/gi;

// netrc: `machine host login user password secret` (one line or several); `default login … password …`.
const netrcPattern = /\b((?:machine\s+\S+|default)(?:\s+(?:login|account)\s+\S+)*\s+password\s+)(\S+)/g;
// pgpass: `host:port:database:user:password`, one to a line.
// The host is a name, an address or `*` (a time such as `15:39:45.000+01:00` in a sentence is not a line).
const pgpassPattern =
  /^((?:[A-Za-z0-9_.-]*[A-Za-z][A-Za-z0-9_.-]*|\d{1,3}(?:\.\d{1,3}){3}|\*):(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:)(\S+)$/gm;

// The ordinary written forms: "my password is hunter2", "the API key for staging: …", "pw = …", "mi
// contraseña es …", "mot de passe : …", "Passwort: …", "пароль: …", "密码是 …", "パスワードは …",
// "비밀번호는 …", "senha: …". The value goes; the sentence stays.
const proseFor = String.raw`(?: (?:for|to|of|para|de|für|для|do|da) [\w .@-]{1,30}?)?`;
const proseIs = String.raw`\s*(?:is|was|will be|es|est|ist|era|é|это|是|为|為|は|는|은|이|:|：|=|—)\s*["'“«]?`;
const proseValue = String.raw`([^\s"'”»，。、]+)`;
// A password's own name needs no "my" or "the" before it, in any language.
const prosePasswordPattern = new RegExp(
  String.raw`((?<![\p{L}\p{N}_-])(?:password|passphrase|passcode|pass ?word|pw|pwd|contraseña|clave|mot de passe|passwort|kennwort|пароль|senha|密码|口令|密钥|パスワード|비밀번호|암호)${proseFor}${proseIs})${proseValue}`,
  "giu",
);
// A key, token, secret or PIN: only as someone's ("my API key is …", "the token for staging: …").
const proseKeyPattern = new RegExp(
  String.raw`(\b(?:my|the|our|your|his|her|their|new) (?:[\w-]+ ){0,2}?(?:api key|secret key|access token|token|key|secret|pin)${proseFor}${proseIs})${proseValue}`,
  "gi",
);
const proseStopwords =
  /^(?:not|no|too|the|a|an|to|is|are|be|must|should|can|cannot|could|will|would|may|might|has|have|needs|contains|being|still|now|set|reset|wrong|incorrect|correct|fine|ok|okay|empty|missing|required|optional|mandatory|expired|invalid|valid|here|there|below|above|in|on|at|by|for|of|stored|saved|hashed|encrypted|protected|hidden|visible|changed|updated|same|different|weak|strong|long|short|secure|insecure|safe|unsafe|good|bad|unknown|forgotten|lost|compromised|leaked|shown|needed|case-sensitive|what|which|where|how|when|who|that|this|it|your|my|our|their|also|just|only|very|really|always|never|used|sent|generated|rotated|revoked|given|provided|displayed|printed|configured|defined|read|created|[\p{L}]{1,3})$/iu;

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

/** Every self-naming format as one anchored expression, to test a key put back together from two lines. */
const anyWholeFormat = new RegExp(`^(?:${secretFormats.map(({ pattern }) => pattern.source).join("|")})$`);
const tokenChar = /[A-Za-z0-9_.=-]/;

/**
 * A self-naming key cut by a line break (a terminal or an editor wrapped it) is redacted whole: both halves
 * become markers, the line break stays. Only the tokens on either side of each line break are read.
 */
function redactWrappedKeys(text: string): string {
  const spans: { start: number; end: number }[] = [];
  for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", newline + 1)) {
    const headEnd = text[newline - 1] === "\r" ? newline - 1 : newline;
    let headStart = headEnd;
    while (headStart > 0 && tokenChar.test(text[headStart - 1] ?? "")) headStart -= 1;
    if (headEnd - headStart < 4) continue;
    let tailStart = newline + 1;
    while (tailStart < text.length && /[ \t>]/.test(text[tailStart] ?? "")) tailStart += 1;
    let tailEnd = tailStart;
    while (tailEnd < text.length && tokenChar.test(text[tailEnd] ?? "")) tailEnd += 1;
    if (tailEnd - tailStart < 4 || tailEnd - tailStart + headEnd - headStart < 16) continue;
    if (anyWholeFormat.test(text.slice(headStart, headEnd) + text.slice(tailStart, tailEnd))) {
      spans.push({ start: headStart, end: headEnd }, { start: tailStart, end: tailEnd });
    }
  }
  return replaceSpans(text, spans);
}

/** The kinds of secret `redactSecrets` recognises, for documentation and tests. */
export const redactedSecretKinds: readonly string[] = [
  ...secretFormats.map((format) => format.kind),
  "AWS secret access key (near an AWS key id)",
  "password in a URL (the password may hold @ and /)",
  "netrc and pgpass lines",
  "a self-naming key wrapped over two lines",
  "Authorization header",
  "bearer or basic credential",
  "secret in an env, YAML (value on the next line), JSON, TOML or INI field",
  "a password or key in a sentence, in nine languages",
];

/**
 * Replaces secrets with `[redacted secret]`: the self-naming formats of the common services (model
 * providers, clouds, code hosts, chat and payment services, private keys, JWTs), and values that look like
 * secrets where the context says one is there. Keys, sentences and everything else stay as they are.
 */
export function redactSecrets(text: string): string {
  let result = redactAwsSecrets(text);
  result = redactWrappedKeys(result);
  for (const { pattern } of secretFormats) {
    pattern.lastIndex = 0;
    result = result.replace(pattern, redactedMarker);
  }
  result = result.replace(urlCredentialPattern, (match, scheme: string, user: string, password: string) =>
    password.includes(redactedMarker) || isReference(password) || isPlaceholder(password)
      ? match
      : `${scheme}${user}:${redactedMarker}@`,
  );
  result = result.replace(netrcPattern, (match, words: string, value: string) =>
    looksLikePassword(value, true) ? `${words}${redactedMarker}` : match,
  );
  result = result.replace(pgpassPattern, (match, fields: string, value: string) =>
    looksLikePassword(value, true) ? `${fields}${redactedMarker}` : match,
  );
  result = result.replace(headerPattern, (match, name: string, separator: string, scheme = "", value: string) =>
    value.length >= 8 && !isReference(value) && !isPlaceholder(value)
      ? `${name}${separator}${scheme}${redactedMarker}`
      : match,
  );
  result = result.replace(schemePattern, (match, scheme: string, space: string, value: string) =>
    looksRandom(value) ? `${scheme}${space}${redactedMarker}` : match,
  );
  result = redactKeyValues(result);
  const writtenForm = (match: string, words: string, written: string): string => {
    // The sentence's own punctuation and a Japanese or Korean ending stay: "… is hunter2!", "… は X です".
    const value = written.replace(/(?:[.,;:!?]+|です|입니다)$/u, "");
    const rest = written.slice(value.length);
    return proseStopwords.test(value) ||
      !looksLikePassword(value, true) ||
      /^\d+(?:[.,]\d+)?$/.test(value) ||
      // An unquoted word of small letters is a word of the sentence in any language ("A senha é obrigatória").
      (/^\p{Ll}+$/u.test(value) && !/["'“«]\s*$/.test(words))
      ? match
      : `${words}${redactedMarker}${rest}`;
  };
  result = result.replace(prosePasswordPattern, writtenForm);
  result = result.replace(proseKeyPattern, writtenForm);
  return result;
}
