import { loadProviderErrorBodies } from "@conch/fake-provider";
import { describe, expect, it } from "vitest";
import { recogniseTooLong } from "./recognise-too-long.js";

const entries = loadProviderErrorBodies();
const tooLong = entries.filter((entry) => entry.kind === "too-long");
/**
 * One request bigger than a per-minute limit (`Limit 30000, Requested 30601`) is labelled a near miss in
 * bodies.json, but it can never pass as sent: it heals like "too long", with that limit as the window.
 */
function singleRequestOverPerMinuteLimit(body: string): { limit: number; requested: number } | null {
  const match = /Limit (\d+), Requested (\d+)/.exec(body);
  if (!match?.[1] || !match[2]) return null;
  const [limit, requested] = [Number(match[1]), Number(match[2])];
  return requested > limit ? { limit, requested } : null;
}
const overPerMinute = entries.filter((entry) => singleRequestOverPerMinuteLimit(entry.body) !== null);
const notTooLong = entries.filter(
  (entry) => entry.kind === "not-too-long" && singleRequestOverPerMinuteLimit(entry.body) === null,
);

describe("recogniseTooLong", () => {
  describe("given every too-long body in bodies.json, with its provider and status", () => {
    it.each(tooLong.map((entry) => [`#${entry.index} ${entry.provider}`, entry] as const))(
      "should recognise %s with the window the body names",
      (_name, entry) => {
        const refusal = recogniseTooLong(entry.provider, entry.status, entry.body);
        expect(refusal).not.toBeNull();
        expect(refusal?.window ?? null).toBe(entry.window);
      },
    );
  });

  describe("given every not-too-long body in bodies.json (rate limits, output caps, credits, pictures)", () => {
    it.each(notTooLong.map((entry) => [`#${entry.index} ${entry.provider}`, entry] as const))(
      "should not recognise %s",
      (_name, entry) => {
        expect(recogniseTooLong(entry.provider, entry.status, entry.body)).toBeNull();
      },
    );
  });

  describe("given a single request bigger than a per-minute limit in bodies.json (OpenAI 429, Groq 413)", () => {
    it.each(overPerMinute.map((entry) => [`#${entry.index} ${entry.provider}`, entry] as const))(
      "should heal %s like too long, with the per-minute limit as the window",
      (_name, entry) => {
        const numbers = singleRequestOverPerMinuteLimit(entry.body);
        expect(overPerMinute.length).toBe(2);
        expect(recogniseTooLong(entry.provider, entry.status, entry.body)).toEqual({
          window: numbers?.limit,
          cause: "input",
          inputTokens: numbers?.requested,
        });
      },
    );
  });

  describe("given a provider id without a row (the generic recogniser)", () => {
    it("should still catch every too-long body except Zhipu's bare business code, with the same window", () => {
      for (const entry of tooLong) {
        const refusal = recogniseTooLong("some-openai-compatible-server", entry.status, entry.body);
        expect(refusal, `#${entry.index}`).not.toBeNull();
        expect(refusal?.window ?? null, `#${entry.index}`).toBe(entry.window);
      }
    });

    it("should not fire on any not-too-long body", () => {
      for (const entry of notTooLong) {
        expect(
          recogniseTooLong("some-openai-compatible-server", entry.status, entry.body),
          `#${entry.index}`,
        ).toBeNull();
      }
    });

    it("should leave a bare 1261 alone, since only Zhipu means 'prompt too long' by it", () => {
      const body = JSON.stringify({ error: { code: "1261", message: "something else" } });
      expect(recogniseTooLong("some-server", 400, body)).toBeNull();
      expect(recogniseTooLong("zhipu", 400, body)).toEqual({ cause: "input" });
    });
  });

  describe("given refusals caused by the output reservation", () => {
    it("should say `output` when the prompt alone fits (OpenAI: 64 in the messages, 8192 in the completion)", () => {
      const entry = entries[2];
      expect(entry && recogniseTooLong("openai", entry.status, entry.body)).toEqual({
        window: 8192,
        cause: "output",
        inputTokens: 64,
        outputTokens: 8192,
      });
    });

    it("should say `output` for Anthropic's `input length and max_tokens exceed context limit`", () => {
      const entry = entries[10];
      expect(entry && recogniseTooLong("anthropic", entry.status, entry.body)).toMatchObject({
        window: 200000,
        cause: "output",
        inputTokens: 199759,
      });
    });

    it("should count tool input as prompt in OpenRouter's split (658 of text, 732 of tool, 262000 output)", () => {
      const entry = entries[44];
      expect(entry && recogniseTooLong("openrouter", entry.status, entry.body)).toMatchObject({
        window: 262000,
        cause: "output",
        inputTokens: 1390,
      });
    });

    it("should say `input` when the prompt is over the window by itself", () => {
      const entry = entries[0];
      expect(entry && recogniseTooLong("openai", entry.status, entry.body)).toMatchObject({
        window: 128000,
        cause: "input",
        inputTokens: 150008,
      });
    });
  });

  describe("given numbers in the text that are not the window", () => {
    it("should not read Ollama Cloud's excess ('by N tokens') as a window", () => {
      const body = JSON.stringify({ error: "prompt too long; exceeded max context length by 4 tokens" });
      expect(recogniseTooLong("ollama", 400, body)).toEqual({ cause: "input" });
    });

    it("should read llama.cpp's structured n_ctx, never n_ctx_train", () => {
      const body = JSON.stringify({
        error: { type: "exceed_context_size_error", n_ctx_train: 131072, n_prompt_tokens: 9000, n_ctx: 8192 },
      });
      expect(recogniseTooLong("llama.cpp", 400, body)).toMatchObject({ window: 8192, inputTokens: 9000 });
    });
  });

  describe("given near misses", () => {
    it("should not fire on a tokens-per-minute limit when this request alone fits it (cumulative use)", () => {
      const body =
        '{"error":{"message":"Rate limit reached for model llama-3.1-8b-instant on tokens per minute (TPM): Limit 6000, Used 5100, Requested 1328. Please try again in 9s.","type":"tokens","code":"rate_limit_exceeded"}}';
      expect(recogniseTooLong("groq", 429, body)).toBeNull();
      expect(recogniseTooLong("groq", 413, body)).toBeNull();
    });

    it("should heal one request bigger than the per-minute limit, with that limit as the window (Groq 413)", () => {
      const body =
        '{"error":{"message":"Request too large for model llama-3.1-8b-instant on tokens per minute (TPM): Limit 6000, Requested 12328, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}}';
      expect(recogniseTooLong("groq", 413, body)).toEqual({ window: 6000, cause: "input", inputTokens: 12328 });
    });

    it("should not let a near-miss word elsewhere in the body hide a real refusal", () => {
      const body = JSON.stringify({
        error: { message: "prompt is too long: 210000 tokens > 200000 maximum", param: "messages.3.content.image" },
        help: "See the rate limits page; quotas are per organization.",
      });
      expect(recogniseTooLong("anthropic", 400, body)).toMatchObject({ window: 200000, inputTokens: 210000 });
    });

    it("should not fire on a 413 for a picture's bytes", () => {
      const body =
        '{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes"}}';
      expect(recogniseTooLong("anthropic", 413, body)).toBeNull();
    });

    it("should not fire on a request body over the byte limit", () => {
      const body =
        '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}';
      expect(recogniseTooLong("anthropic", 413, body)).toBeNull();
    });

    it("should not fire on `max_tokens` too large for the output", () => {
      const body =
        '{"error":{"message":"max_tokens is too large: 8192. This model supports at most 4096 completion tokens"}}';
      expect(recogniseTooLong("openai", 400, body)).toBeNull();
    });

    it("should never fire on HTTP 429 or 402, whatever the words", () => {
      const body = "This model's maximum context length is 8192 tokens.";
      expect(recogniseTooLong("openai", 429, body)).toBeNull();
      expect(recogniseTooLong("openai", 402, body)).toBeNull();
      expect(recogniseTooLong("openai", 400, body)).toEqual({ window: 8192, cause: "input" });
    });
  });

  describe("given a parsed body instead of text", () => {
    it("should read it the same way", () => {
      const body = { error: { message: "prompt is too long: 210000 tokens > 200000 maximum" } };
      expect(recogniseTooLong("anthropic", 400, body)).toMatchObject({ window: 200000, inputTokens: 210000 });
    });
  });

  describe("given an empty or unrelated body", () => {
    it("should return null", () => {
      expect(recogniseTooLong("openai", 400, "")).toBeNull();
      expect(recogniseTooLong("openai", 500, '{"error":{"message":"The server had an error"}}')).toBeNull();
      expect(recogniseTooLong("openai", 400, '{"error":{"message":"Invalid value for temperature"}}')).toBeNull();
    });
  });
});
