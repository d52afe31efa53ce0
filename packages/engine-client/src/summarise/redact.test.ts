import { secretCorpus } from "@conch/fake-provider";
import { describe, expect, it } from "vitest";
import { redactedMarker, redactSecrets } from "./redact.js";

describe("redactSecrets", () => {
  it.each(secretCorpus)("given a $kind, should replace it with the marker", ({ text, secret }) => {
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain(redactedMarker);
  });

  it.each([
    "max_tokens=1600 and temperature=0.2",
    "The token budget is 100000 tokens.",
    "password: required",
    "See https://example.com/docs/api-keys for how keys work.",
    "The function skip-navigation-menu-items-button is fine.",
    "A sentence about secrets and passwords in general.",
    "git commit -m 'fix the tokenizer'",
    "const apiKey = process.env.API_KEY;",
  ])("given ordinary text %j, should leave it alone", (text) => {
    expect(redactSecrets(text)).toBe(text);
  });

  it("should keep the user name of a URL and the words around a secret", () => {
    expect(redactSecrets("see https://alice:s3cr3tpw@example.com/x for it")).toBe(
      `see https://alice:${redactedMarker}@example.com/x for it`,
    );
    expect(redactSecrets("Authorization: Bearer abcdefgh12345678")).toBe(`Authorization: Bearer ${redactedMarker}`);
  });

  it("should be idempotent", () => {
    for (const { text } of secretCorpus) {
      const once = redactSecrets(text);
      expect(redactSecrets(once)).toBe(once);
    }
  });
});
