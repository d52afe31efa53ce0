/**
 * Secret formats that name themselves: a prefix or shape no ordinary text has. The families follow the
 * formats of gitleaks' default rules and secretlint's recommended preset (read for their formats; the
 * expressions are ours). A value that only its context marks as a secret (`password=…`, `Authorization:`)
 * is the entropy rule's job, in `redact.ts`.
 */

export interface SecretFormat {
  /** What it is, for the docs and the tests. */
  readonly kind: string;
  /** The whole secret (never the words around it). */
  readonly pattern: RegExp;
}

// A token's end: not followed by more token characters.
const end = "(?![A-Za-z0-9_-])";
const start = "(?<![A-Za-z0-9_-])";

function prefixed(kind: string, prefix: string, body: string, flags = "g"): SecretFormat {
  return { kind, pattern: new RegExp(`${start}${prefix}${body}${end}`, flags) };
}

/** Ordered: blocks and structured forms first, so that a key inside a block is not cut in two. */
export const secretFormats: readonly SecretFormat[] = [
  {
    kind: "private key block",
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { kind: "PuTTY private key", pattern: /PuTTY-User-Key-File-\d: [\s\S]*?Private-MAC: [0-9a-f]+/g },
  prefixed("age secret key", "AGE-SECRET-KEY-1", "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
  { kind: "JWT", pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  prefixed("Anthropic key", "sk-ant-(?:api|admin|oat)\\d{2}-", "[A-Za-z0-9_-]{32,}"),
  prefixed("OpenRouter key", "sk-or-v1-", "[a-f0-9]{64}"),
  // OpenAI (and DeepSeek, Moonshot, ...): sk- and a random body; `sk-learn-...` is a word, not a key.
  prefixed(
    "OpenAI-style key",
    "sk-(?:proj-|svcacct-|admin-|None-)?",
    "(?=[A-Za-z0-9_-]*\\d)(?=[A-Za-z0-9_-]*[A-Za-z])(?![a-z]+-[a-z])[A-Za-z0-9_-]{20,}",
  ),
  prefixed("Groq key", "gsk_", "[A-Za-z0-9]{48,}"),
  prefixed("xAI key", "xai-", "[A-Za-z0-9]{60,}"),
  prefixed("Perplexity key", "pplx-", "[A-Za-z0-9]{40,}"),
  prefixed("Replicate token", "r8_", "[A-Za-z0-9]{37}"),
  prefixed("Hugging Face token", "(?:hf_|api_org_)", "[A-Za-z]{34}"),
  prefixed("Fireworks key", "fw_", "[A-Za-z0-9]{24,}"),
  prefixed("Google API key", "AIza", "[0-9A-Za-z_-]{35}"),
  prefixed("Google OAuth token", "ya29\\.", "[0-9A-Za-z_-]{20,}"),
  prefixed("Google OAuth client secret", "GOCSPX-", "[A-Za-z0-9_-]{28}"),
  prefixed("AWS access key id", "(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA|AGPA|ANPA|ANVA|AIPA|APKA)", "[0-9A-Z]{16}"),
  prefixed("GitHub token", "(?:gh[pousr]_)", "[A-Za-z0-9]{36,}"),
  prefixed("GitHub fine-grained token", "github_pat_", "[A-Za-z0-9_]{22,}"),
  prefixed("GitLab token", "(?:glpat-|gldt-|glrt-|glptt-|glcbt-|glimt-|gloas-)", "[A-Za-z0-9_-]{20,}"),
  prefixed("npm token", "npm_", "[A-Za-z0-9]{36}"),
  prefixed("PyPI token", "pypi-AgEIcHlwaS5vcmc", "[A-Za-z0-9_-]{50,}"),
  prefixed("Slack token", "xox[abposre]-", "[A-Za-z0-9-]{10,}"),
  prefixed("Slack app token", "xapp-\\d-", "[A-Z0-9]+-\\d+-[a-z0-9]+"),
  { kind: "Slack webhook", pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]+/g },
  {
    kind: "Discord webhook",
    pattern: /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+/g,
  },
  // Telegram bot token: the bot id, a colon, 35 characters.
  { kind: "Telegram bot token", pattern: /(?<![\w:])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])/g },
  prefixed("SendGrid key", "SG\\.", "[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}"),
  prefixed("Twilio API key", "SK", "[0-9a-f]{32}"),
  prefixed("Mailgun key", "key-", "[0-9a-f]{32}"),
  prefixed("Mailchimp key", "", "[0-9a-f]{32}-us\\d{1,2}"),
  prefixed("DigitalOcean token", "do[opr]_v1_", "[a-f0-9]{64}"),
  prefixed("Stripe key", "(?:sk|rk)_(?:live|test)_", "[A-Za-z0-9]{16,}"),
  prefixed("Stripe webhook secret", "whsec_", "[A-Za-z0-9]{16,}"),
  prefixed("Shopify token", "shp(?:at|ss|ca|pa)_", "[a-fA-F0-9]{32}"),
  prefixed("Square token", "(?:sq0atp-|sq0csp-|EAAA)", "[A-Za-z0-9_-]{22,60}"),
  prefixed("Databricks token", "dapi", "[a-f0-9]{32}(?:-\\d)?"),
  prefixed("Linear key", "lin_api_", "[A-Za-z0-9]{40}"),
  prefixed("Notion token", "(?:secret_|ntn_)", "[A-Za-z0-9]{43,46}"),
  prefixed("Postman key", "PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}"),
  prefixed("Doppler token", "dp\\.(?:pt|st|sa|ct|scim|audit)\\.", "[A-Za-z0-9]{40,44}"),
  prefixed("Vault token", "hv[sbr]\\.", "[A-Za-z0-9_-]{24,}"),
  prefixed("Sentry token", "(?:sntrys_|sntryu_)", "[A-Za-z0-9_=+/]{40,}"),
  prefixed("Grafana token", "(?:glc_|glsa_)", "[A-Za-z0-9_=+/]{32,}"),
  prefixed("Atlassian token", "ATATT3", "[A-Za-z0-9_=-]{100,}"),
  prefixed("Heroku key", "HRKU-", "[A-Za-z0-9_-]{40,}"),
  prefixed("PlanetScale token", "pscale_(?:tkn|pw|oauth)_", "[A-Za-z0-9_.-]{32,64}"),
  prefixed("Supabase token", "sbp_", "[a-f0-9]{40}"),
  prefixed("Figma token", "figd_", "[A-Za-z0-9_-]{40,200}"),
  prefixed("1Password service account token", "ops_", "ey[A-Za-z0-9+/=]{100,1280}"),
  prefixed("Docker personal access token", "dckr_pat_", "[A-Za-z0-9_-]{27}"),
  prefixed("Vercel token", "vc[piark]_", "[A-Za-z0-9]{20,60}"),
  prefixed("Netlify token", "nfp_", "[A-Za-z0-9]{36}"),
  prefixed("Pulumi token", "pul-", "[a-f0-9]{40}"),
  prefixed("Terraform Cloud token", "[A-Za-z0-9]{14}\\.atlasv1\\.", "[A-Za-z0-9_=-]{60,70}"),
  prefixed("Dropbox token", "sl\\.", "[A-Za-z0-9_-]{130,}"),
  prefixed("Facebook token", "EAA[A-Za-z0-9]{0,4}", "(?=[A-Za-z0-9]*\\d)[A-Za-z0-9]{100,}"),
  {
    kind: "Azure storage key",
    pattern: /(?<=\b(?:AccountKey|SharedAccessKey)=)[A-Za-z0-9+/]{40,}={0,2}/g,
  },
];
