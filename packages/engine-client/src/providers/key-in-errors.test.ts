import { describe, expect, it } from "vitest";
import { ProviderCallError } from "../errors.js";
import { textMessage } from "../messages.js";
import { createProvider } from "./create-provider.js";

// Issue #28, fault 3: a provider that echoes the key in its error, across the 500-character message limit.
const key = `sk-proj-${"Q7xL2mN9vR4tY8wZ".repeat(4)}ab`; // 74 characters

/** Every run of 8 characters of the key: none may leave. */
const keyPieces = Array.from({ length: key.length - 7 }, (_, index) => key.slice(index, index + 8));

function echoingFetch(at: number): typeof fetch {
  return async () => {
    const message = `${"x".repeat(at)} Incorrect API key provided: ${key}. Find your key at the dashboard.`;
    return new Response(JSON.stringify({ error: { message, type: "invalid_request_error" } }), {
      status: 401,
      headers: { "content-type": "application/json" },
    });
  };
}

describe.each(["openai", "anthropic", "google", "ollama"] as const)("given the %s adapter", (kind) => {
  it.each([0, 440, 470, 495])(
    "should redact its key from an error that echoes it at %i characters, before the message is cut",
    async (at) => {
      const adapter = createProvider(kind, { baseURL: "http://127.0.0.1:9/v1", apiKey: key, fetch: echoingFetch(at) });
      let caught: unknown;
      try {
        for await (const _part of adapter.streamChat({ model: "m", messages: [textMessage(0, "user", "hi")] })) {
          // nothing comes
        }
      } catch (error) {
        caught = error;
      }
      expect(ProviderCallError.isInstance(caught)).toBe(true);
      const error = caught as ProviderCallError;
      const leaving = [error.problem.providerMessage ?? "", error.message, error.responseBody ?? ""];
      for (const text of leaving) for (const piece of keyPieces) expect(text).not.toContain(piece);
      // The provider's words stay, the key's place marked, wherever the cut falls.
      expect(error.problem.providerMessage).toMatch(at === 0 ? /Incorrect API key provided: \[redacted\]\./ : /^x+/);
    },
  );
});
