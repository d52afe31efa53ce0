import { type FakeProvider, secretCorpus, startFakeProvider } from "@conch/fake-provider";
import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, describe, expect, it } from "vitest";
import { chatLogFrom } from "../mock/long-chat.js";
import { createProvider } from "../providers/create-provider.js";
import { redactedMarker, redactedSecretKinds, redactSecrets } from "./redact.js";
import { secretFormats } from "./secret-formats.js";
import { summariseFolded } from "./summariser.js";

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

// Made-up values in each format (never real keys), from a fixed-seed generator.
let seed = 20261201;
function pick(alphabet: string, length: number): string {
  let out = "";
  for (let index = 0; index < length; index += 1) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    out += alphabet[seed % alphabet.length];
  }
  return out;
}
const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const hex = "0123456789abcdef";
const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const b64 = `${alnum}+/`;

/** One sample per format, in a sentence of the kind it turns up in. */
const samples: Record<string, string> = {
  "private key block": `-----BEGIN EC PRIVATE KEY-----\n${pick(b64, 64)}\n${pick(b64, 24)}\n-----END EC PRIVATE KEY-----`,
  "PuTTY private key": `PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n${pick(b64, 44)}\nPrivate-MAC: ${pick(hex, 64)}`,
  "age secret key": `AGE-SECRET-KEY-1${pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)}`,
  JWT: `eyJhbGciOiJSUzI1NiJ9.eyJ${pick(alnum, 30)}.${pick(alnum, 43)}`,
  "Anthropic key": `sk-ant-api03-${pick(alnum, 93)}AA`,
  "OpenRouter key": `sk-or-v1-${pick(hex, 64)}`,
  "OpenAI-style key": `sk-proj-${pick(alnum, 48)}`,
  "Groq key": `gsk_${pick(alnum, 52)}`,
  "xAI key": `xai-${pick(alnum, 80)}`,
  "Perplexity key": `pplx-${pick(alnum, 48)}`,
  "Replicate token": `r8_${pick(alnum, 37)}`,
  "Hugging Face token": `hf_${pick(letters, 34)}`,
  "Fireworks key": `fw_${pick(alnum, 24)}`,
  "Google API key": `AIza${pick(alnum, 35)}`,
  "Google OAuth token": `ya29.${pick(alnum, 60)}`,
  "Google OAuth client secret": `GOCSPX-${pick(alnum, 28)}`,
  "AWS access key id": `AKIA${pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)}`,
  "GitHub token": `ghp_${pick(alnum, 36)}`,
  "GitHub fine-grained token": `github_pat_11${pick(alnum, 20)}_${pick(alnum, 59)}`,
  "GitLab token": `glpat-${pick(alnum, 20)}`,
  "npm token": `npm_${pick(alnum, 36)}`,
  "PyPI token": `pypi-AgEIcHlwaS5vcmc${pick(alnum, 70)}`,
  "Slack token": `xoxb-${pick("0123456789", 12)}-${pick("0123456789", 13)}-${pick(alnum, 24)}`,
  "Slack app token": `xapp-1-A${pick("ABCDEFGHIJ0123456789", 10)}-${pick("0123456789", 13)}-${pick(hex, 64)}`,
  "Slack webhook": `https://hooks.slack.com/services/T${pick(alnum, 8)}/B${pick(alnum, 10)}/${pick(alnum, 24)}`,
  "Discord webhook": `https://discord.com/api/webhooks/${pick("0123456789", 18)}/${pick(alnum, 68)}`,
  "Telegram bot token": `${pick("123456789", 10)}:AA${pick(alnum, 33)}`,
  "SendGrid key": `SG.${pick(alnum, 22)}.${pick(alnum, 43)}`,
  "Twilio API key": `SK${pick(hex, 32)}`,
  "Mailgun key": `key-${pick(hex, 32)}`,
  "Mailchimp key": `${pick(hex, 32)}-us14`,
  "DigitalOcean token": `dop_v1_${pick(hex, 64)}`,
  "Stripe key": `sk_live_${pick(alnum, 99)}`,
  "Stripe webhook secret": `whsec_${pick(alnum, 32)}`,
  "Shopify token": `shpat_${pick(hex, 32)}`,
  "Square token": `sq0atp-${pick(alnum, 22)}`,
  "Databricks token": `dapi${pick(hex, 32)}`,
  "Linear key": `lin_api_${pick(alnum, 40)}`,
  "Notion token": `ntn_${pick(alnum, 46)}`,
  "Postman key": `PMAK-${pick(hex, 24)}-${pick(hex, 34)}`,
  "Doppler token": `dp.pt.${pick(alnum, 43)}`,
  "Vault token": `hvs.${pick(alnum, 90)}`,
  "Sentry token": `sntrys_${pick(alnum, 60)}`,
  "Grafana token": `glsa_${pick(alnum, 32)}_${pick(hex, 8)}`,
  "Atlassian token": `ATATT3${pick(alnum, 180)}`,
  "Heroku key": `HRKU-${pick(alnum, 60)}`,
  "PlanetScale token": `pscale_tkn_${pick(alnum, 43)}`,
  "Supabase token": `sbp_${pick(hex, 40)}`,
  "Figma token": `figd_${pick(alnum, 40)}`,
  "1Password service account token": `ops_eyJ${pick(b64, 180)}`,
  "Docker personal access token": `dckr_pat_${pick(alnum, 27)}`,
  "Vercel token": `vcp_${pick(alnum, 40)}`,
  "Netlify token": `nfp_${pick(alnum, 36)}`,
  "Pulumi token": `pul-${pick(hex, 40)}`,
  "Terraform Cloud token": `${pick(alnum, 14)}.atlasv1.${pick(alnum, 67)}`,
  "Dropbox token": `sl.${pick(alnum, 138)}`,
  "Facebook token": `EAAB${pick(alnum, 120)}9`,
  "Azure storage key": pick(b64, 86),
};

function sentenceFor(kind: string, secret: string): string {
  if (kind === "Azure storage key") {
    return `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${secret}==;EndpointSuffix=core.windows.net`;
  }
  return `The tool printed ${secret} and then exited.`;
}

describe("redactSecrets on every format of its rule set", () => {
  it("should have a sample for every format", () => {
    expect(Object.keys(samples).sort()).toEqual(secretFormats.map((format) => format.kind).sort());
  });

  it.each(Object.entries(samples))("given a %s, should redact it and keep the sentence", (kind, secret) => {
    const text = sentenceFor(kind, secret);
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(secret.slice(4, 24));
    expect(redacted).toContain(redactedMarker);
    if (kind !== "Azure storage key") {
      expect(redacted.startsWith("The tool printed ")).toBe(true);
      expect(redacted.endsWith(" and then exited.")).toBe(true);
    }
  });

  it.each(secretCorpus)("given the corpus' $kind, should redact it", ({ text, secret }) => {
    expect(redactSecrets(text)).not.toContain(secret);
  });

  it("should list the context rules beside the formats", () => {
    expect(redactedSecretKinds.length).toBe(secretFormats.length + 8);
  });
});

describe("a fold of a chat holding a sample of every format, over the fake provider", () => {
  it("should send none of them in any summariser request, nor keep one in the summary", async () => {
    const server = await startFakeProvider({
      dialect: "openai",
      models: [{ id: "cheap", window: 128_000 }],
      countTokens: (text) => countTokens(text),
      // A summariser that copies every line it reads: whatever reached it would show in the summary too.
      reply: (request) => ({ text: `Summary:\n${request.lastUserText}` }),
    });
    servers.push(server);
    const provider = createProvider("openai", { baseURL: server.baseURL, local: false, cheapestModel: "cheap" });
    const entries = Object.entries(samples);
    const folded = chatLogFrom(
      // Each as it turns up (an Azure key is a format only inside its connection string).
      entries.map(
        ([kind, secret]) => [`Here is what I ran: ${sentenceFor(kind, secret)}`, sentenceFor(kind, secret)] as const,
      ),
    );
    const result = await summariseFolded({
      provider,
      models: await provider.listModels(),
      chatModel: "cheap",
      folded,
      previousSummary: null,
      budget: 64_000,
    });
    const sent = server.chatRequests().map((request) => JSON.stringify(request.body));
    expect(sent.length).toBeGreaterThan(0);
    const reached = entries.filter(([, secret]) => {
      const core = JSON.stringify(secret.slice(4, 24)).slice(1, -1);
      return sent.some((body) => body.includes(core));
    });
    expect(reached.map(([kind]) => kind)).toEqual([]);
    if (result.status === "summarised") {
      for (const [kind, secret] of entries) expect(result.text, kind).not.toContain(secret.slice(4, 24));
    }
    console.info(`${entries.length} formats folded, ${sent.length} summariser requests, ${reached.length} reached`);
  });
});

describe("redactSecrets where only the context says a secret is there", () => {
  it.each([
    ["redis://:s3cretPass@cache:6379/0", "redis://:[redacted secret]@cache:6379/0"],
    ["my password is hunter2, do not share it", "my password is [redacted secret], do not share it"],
    ["The password for the staging box is Tr0ub4dor&3.", "The password for the staging box is [redacted secret]."],
    [
      "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "aws_access_key_id = [redacted secret]\naws_secret_access_key = [redacted secret]",
    ],
    [
      "key AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "key [redacted secret] secret [redacted secret]",
    ],
    ['{"client_secret": "9fQe2LxA7pV4mZ8k"}', '{"client_secret": "[redacted secret]"}'],
    ["TWILIO_AUTH_TOKEN=3f9a1c5e7b2d4f6a8c0e1b3d5f7a9c2e", "TWILIO_AUTH_TOKEN=[redacted secret]"],
    ["Authorization: Bearer 9f8e7d6c5b4a3f2e1d0c", "Authorization: Bearer [redacted secret]"],
    ["curl -H 'X-Api-Key: 0c7b2e9a4f1d6b3e8a5c' url", "curl -H 'X-Api-Key: [redacted secret]' url"],
    ["Basic dXNlcjpwYXNzd29yZA==", "Basic [redacted secret]"],
    ["PASSWORD=letmein", "PASSWORD=[redacted secret]"],
    ['const password = "hunter22";', 'const password = "[redacted secret]";'],
  ])("given %j, should redact the value and keep the key", (text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });

  it.each([
    "const apiKey = getApiKey();",
    "const apiKey = process.env.API_KEY;",
    "pip install sk-learn-extras and scikit-learn",
    "the sk-learn-pipeline-example repository",
    "Bearer instrument",
    "Basic understanding of the API is assumed.",
    "password: must be at least 12 characters",
    "password: required",
    "max_tokens=1600 and temperature=0.2",
    "The token budget is 100000 tokens.",
    "tokenizer: o200k_base",
    "See https://example.com/docs/api-keys for how keys work.",
    "The function skip-navigation-menu-items-button is fine.",
    "A sentence about secrets and passwords in general.",
    "git commit -m 'fix the tokenizer'",
    "my password is not working",
    "api_key=<your-api-key>",
    "token: $GITHUB_TOKEN",
    "Authorization: required",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "id 123e4567-e89b-12d3-a456-426614174000",
  ])("given ordinary text %j, should leave it unchanged", (text) => {
    expect(redactSecrets(text)).toBe(text);
  });
});

describe("redactSecrets on ordinary text (properties)", () => {
  const word = fc.stringMatching(/^[a-z]{2,12}$/);
  const sentence = fc.array(word, { minLength: 1, maxLength: 14 }).map((words) => `${words.join(" ")}.`);
  const prose = fc.array(sentence, { minLength: 1, maxLength: 6 }).map((sentences) => sentences.join(" "));
  const identifier = fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,14}$/);
  const code = fc
    .tuple(identifier, identifier, fc.integer({ min: 0, max: 100000 }), word)
    .map(
      ([name, other, count, text]) =>
        `const ${name} = ${other}(${count});\nif (${name} > ${count}) return "${text}";\nexport function ${other}() { return ${name}.${text}; }`,
    );
  const hexOf = (length: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`));

  it("should leave prose unchanged", () => {
    fc.assert(fc.property(prose, (text) => redactSecrets(text) === text));
  });

  it("should leave code unchanged", () => {
    fc.assert(fc.property(code, (text) => redactSecrets(text) === text));
  });

  it("should leave hashes, UUIDs and git SHAs unchanged, alone or in a sentence", () => {
    const value = fc.oneof(hexOf(40), hexOf(64), hexOf(32), fc.uuid(), hexOf(7));
    fc.assert(
      fc.property(value, word, (id, text) => {
        const lines = [id, `commit ${id}`, `${text} ${id} ${text}`, `sha: ${id}`, `"id": "${id}"`, `hash=${id}`];
        return lines.every((line) => redactSecrets(line) === line);
      }),
    );
  });
});
