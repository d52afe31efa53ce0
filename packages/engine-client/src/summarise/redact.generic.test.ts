import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redactedMarker, redactSecrets } from "./redact.js";

interface GuardText {
  readonly id: string;
  readonly kind: string;
  readonly text: string;
}

const guardTexts = JSON.parse(
  readFileSync(new URL("../../../../test-fixtures/guard-texts/guard-texts.json", import.meta.url), "utf8"),
) as GuardText[];

// --- Secret values: what a person or a machine picks, with the characters that used to cut a value short. ---

const symbols = "&@/#!%^*+=-_.";
const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * A password: letters, a digit and a symbol (& @ / # …), never a space. (A value of letters joined by dots
 * alone, `config.db_password`, is where a secret lives, not one.)
 */
const passwordValue = fc
  .tuple(
    fc.constantFrom(...alnum),
    fc.string({ unit: fc.constantFrom(...alnum, ...symbols), minLength: 6, maxLength: 24 }),
    fc.constantFrom(..."&@/#!%^*+=-"),
    fc.constantFrom(..."0123456789"),
    fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz"),
  )
  .map(([first, middle, symbol, digit, letter]) => `${first}${middle}${symbol}${digit}${letter}`);

/** A machine-made key: 24–48 characters of mixed letters and digits. */
const keyValue = fc
  .string({ unit: fc.constantFrom(...alnum), minLength: 24, maxLength: 48 })
  .filter((value) => /\d/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value));

const passwordKeys = ["password", "DB_PASSWORD", "db_pass", "pwd", "passphrase", "Password", "smtp_password"];
const keyKeys = ["api_key", "API_KEY", "auth_token", "client_secret", "SECRET_KEY", "accessToken", "private_key"];

type FileShape = (key: string, value: string) => string;

/** The files and lines secrets are pasted in, each with a value the shape allows. */
const shapes: Record<string, { readonly shape: FileShape; readonly allows: (value: string) => boolean }> = {
  env: { shape: (key, value) => `# .env\nexport ${key}=${value}\nDEBUG=false\n`, allows: () => true },
  "yaml inline": {
    shape: (key, value) => `db:\n  host: db.internal\n  ${key}: ${value}\n`,
    allows: (v) => !/ #/.test(v),
  },
  "yaml next line": { shape: (key, value) => `db:\n  ${key}:\n    ${value}\n  port: 5432\n`, allows: () => true },
  "yaml block": { shape: (key, value) => `${key}: |\n  ${value}\nnext: 1\n`, allows: () => true },
  json: { shape: (key, value) => JSON.stringify({ service: "billing", [key]: value }, null, 2), allows: () => true },
  "json in a string": {
    shape: (key, value) => JSON.stringify({ body: JSON.stringify({ [key]: value }) }),
    allows: (v) => !/["\\]/.test(v),
  },
  toml: { shape: (key, value) => `[server]\nport = 8080\n${key} = "${value}"\n`, allows: (v) => !/["\\]/.test(v) },
  ini: { shape: (key, value) => `[database]\nuser = app\n${key}=${value}\n`, allows: () => true },
};

const spacedName: FileShape = (_key, value) => JSON.stringify({ "API Key": value, region: "eu" });

const urlShapes: Record<string, (value: string) => string> = {
  "URL password": (value) => `DATABASE_URL is postgres://app:${value}@db.example.com:5432/app?sslmode=require`,
  netrc: (value) => `machine api.example.com\n  login bob\n  password ${value}\n`,
  pgpass: (value) => `db.example.com:5432:app:bob:${value}`,
  "written form": (value) => `ok, my password is ${value} - please keep it safe`,
};

describe("redactSecrets on generated files", () => {
  it.each(Object.entries(shapes))(
    "should redact a generated password under a password key in %s",
    (_name, { shape, allows }) => {
      fc.assert(
        fc.property(fc.constantFrom(...passwordKeys), passwordValue.filter(allows), (key, value) => {
          const redacted = redactSecrets(shape(key, value));
          expect(redacted).not.toContain(value);
          expect(redacted).toContain(redactedMarker);
        }),
        { numRuns: 150 },
      );
    },
  );

  it.each(Object.entries(shapes))(
    "should redact a generated key under a key or token name in %s",
    (_name, { shape }) => {
      fc.assert(
        fc.property(fc.constantFrom(...keyKeys), keyValue, (key, value) => {
          expect(redactSecrets(shape(key, value))).not.toContain(value);
        }),
        { numRuns: 150 },
      );
    },
  );

  it('should redact a generated key under a JSON name with spaces ("API Key")', () => {
    fc.assert(
      fc.property(keyValue, (value) => {
        expect(redactSecrets(spacedName("", value))).not.toContain(value);
      }),
      { numRuns: 150 },
    );
  });

  it.each(Object.entries(urlShapes))("should redact a generated password in a %s", (_name, shape) => {
    fc.assert(
      fc.property(
        passwordValue.filter((v) => !/[:\s]/.test(v)),
        (value) => {
          expect(redactSecrets(shape(value))).not.toContain(value);
        },
      ),
      { numRuns: 150 },
    );
  });

  const ordinaryKeys = ["name", "host", "port", "timeout", "model", "max_tokens", "region", "user", "image"];
  const ordinaryValue = fc.oneof(
    fc.uuid(),
    fc.integer({ min: 0, max: 1_000_000 }).map(String),
    fc.constantFrom("true", "false", "null", "eu-west-1", "gpt-4o-mini", "db.internal", "/var/lib/app/data"),
    fc.stringMatching(/^[0-9a-f]{40}$/),
    fc.stringMatching(/^[a-z]{3,12}(?:-[a-z]{3,12}){0,2}$/),
  );
  // Where a secret lives, or a stand-in for one: never the secret itself.
  const standIns = fc.constantFrom(
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell reference, as text
    "${DB_PASSWORD}",
    "$API_KEY",
    "<your-api-key>",
    "{{ secrets.TOKEN }}",
    "process.env.API_KEY",
    "your_api_key_here",
    "xxxxxxxx",
    "********",
    "changeme",
  );

  it.each(Object.entries(shapes))(
    "should leave ordinary values under ordinary keys in %s unchanged",
    (_name, { shape }) => {
      fc.assert(
        fc.property(fc.constantFrom(...ordinaryKeys), ordinaryValue, (key, value) => {
          const text = shape(key, value);
          expect(redactSecrets(text)).toBe(text);
        }),
        { numRuns: 150 },
      );
    },
  );

  it.each(["env", "yaml inline", "json", "ini"])(
    "should leave references and placeholders under secret keys in %s",
    (name) => {
      const shape = shapes[name]?.shape;
      fc.assert(
        fc.property(fc.constantFrom(...passwordKeys, ...keyKeys), standIns, (key, value) => {
          const text = shape?.(key, value) ?? "";
          expect(redactSecrets(text)).toBe(text);
        }),
        { numRuns: 150 },
      );
    },
  );

  it("should keep the words around the secret and be idempotent", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.values(shapes)),
        fc.constantFrom(...passwordKeys),
        passwordValue,
        ({ shape, allows }, key, value) => {
          if (!allows(value)) return;
          const once = redactSecrets(shape(key, value));
          expect(once).toContain(key.replace(/"/g, ""));
          expect(redactSecrets(once)).toBe(once);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("redactSecrets on the guard texts (test-fixtures/guard-texts)", () => {
  it("should hold at least 50 texts of every kind it guards", () => {
    expect(guardTexts.length).toBeGreaterThanOrEqual(50);
    expect(new Set(guardTexts.map((entry) => entry.kind))).toEqual(
      new Set(["uuid", "commit-hash", "digest", "base64-picture", "code", "prose", "other"]),
    );
  });

  it("should change none of them", () => {
    const changed = guardTexts.filter((entry) => redactSecrets(entry.text) !== entry.text);
    expect(changed.map((entry) => entry.id)).toEqual([]);
  });
});

describe("redactSecrets on written forms in nine languages", () => {
  it.each([
    "my password is hunter2!",
    "The password for the wifi is BlueSky-42",
    "pw = tr0ub4dor&3",
    "mi contraseña es Gato-2024",
    "mot de passe : Soleil#75",
    "Passwort: Sommer2024!",
    "пароль: Zima-2024",
    "密码是 Qwerty-88",
    "パスワードは Sakura2024 です",
    "비밀번호는 Hangul-77 입니다",
    "senha: Praia-2024",
    "the key: sk-abcdefghijklmnopqrstuvwx1234",
  ])("should redact the value in %j and keep the sentence", (text) => {
    const redacted = redactSecrets(text);
    expect(redacted).toContain(redactedMarker);
    expect(redacted.length).toBeLessThan(text.length + redactedMarker.length);
  });
});
