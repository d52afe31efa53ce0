// The refusals a real llama-server sent in the suite, kept verbatim in test-fixtures/refusals/llama-server/: the
// engine's classifier reads each as "too long" with the window it names, and the server still words them so.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { recogniseTooLong } from "@conch/engine-client/providers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type StartedLlamaServer, startLlamaServer } from "../../scripts/llama-server.js";
import { repoRoot } from "../helpers.js";

interface StoredRefusal {
  readonly file: string;
  readonly window: number;
  readonly status: number;
  readonly body: { readonly error: { readonly n_ctx: number; readonly n_prompt_tokens: number } };
}

const folder = join(repoRoot, "test-fixtures", "refusals", "llama-server");
const stored: StoredRefusal[] = readdirSync(folder)
  .filter((file) => file.endsWith(".json"))
  .map((file) => ({ file, ...(JSON.parse(readFileSync(join(folder, file), "utf8")) as Omit<StoredRefusal, "file">) }));

describe("llama-server's real refusals", () => {
  it("are stored, one per window", () => {
    expect(stored.map((refusal) => refusal.window).sort((a, b) => a - b)).toEqual([512, 2048, 8192]);
  });

  it.each(stored.map((refusal) => [refusal.file, refusal] as const))(
    "%s: recognised as too long, with its window",
    (_file, refusal) => {
      const recognised = recogniseTooLong("llama.cpp", refusal.status, refusal.body);
      expect(recognised).not.toBeNull();
      expect(recognised?.window).toBe(refusal.window);
      expect(recognised?.inputTokens).toBe(refusal.body.error.n_prompt_tokens);
    },
  );

  describe("sent again by the server today", () => {
    let server: StartedLlamaServer;
    beforeAll(async () => {
      server = await startLlamaServer({ binary: inject("llamaServerBinary"), window: 512 });
    });
    afterAll(async () => {
      await server?.stop();
    });

    it("a request over the window gets the stored refusal's shape and words", async () => {
      const response = await fetch(`${server.origin}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: server.alias, messages: [{ role: "user", content: "你好".repeat(400) }] }),
      });
      const body = (await response.json()) as { error: Record<string, unknown> };
      const [storedRefusal] = stored.filter((refusal) => refusal.window === 512);
      expect(response.status).toBe(storedRefusal?.status);
      expect(Object.keys(body.error).sort()).toEqual(Object.keys(storedRefusal?.body.error ?? {}).sort());
      expect(body.error.type).toBe("exceed_context_size_error");
      expect(body.error.n_ctx).toBe(512);
      expect(String(body.error.message)).toMatch(
        /^request \(\d+ tokens\) exceeds the available context size \(512 tokens\)/,
      );
    });
  });
});
