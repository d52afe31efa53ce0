import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startVite } from "./helpers.js";

/** `pnpm dev`'s `/provider` proxy adds the key: tried as another site's page would use it (issue 14, fault 2). */
describe("pnpm dev's /provider proxy against cross-site requests", () => {
  let server: { url: string; stop: () => Promise<void> };
  beforeAll(async () => {
    server = await startVite("dev/vite.api.config.ts", { NACRE_PROVIDER: "fake" });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const chat = JSON.stringify({
    model: "openai/gpt-4o-mini",
    stream: false,
    messages: [{ role: "user", content: "hi" }],
  });

  it.each([
    ["another site's Origin", { origin: "https://evil.example", "content-type": "text/plain" }],
    ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site", "content-type": "text/plain" }],
    ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site", "content-type": "application/json" }],
    ["a null Origin", { origin: "null", "content-type": "text/plain" }],
  ])("should refuse %s with 403 and never reach the provider", async (_name, headers) => {
    const response = await fetch(new URL("/provider/chat/completions", server.url), {
      method: "POST",
      headers,
      body: chat,
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain("cross_site_refused");
  });

  it("should serve the page's own requests", async () => {
    const url = new URL("/provider/models", server.url);
    const response = await fetch(url, { headers: { origin: url.origin, "sec-fetch-site": "same-origin" } });
    expect(response.status).toBe(200);
  });
});
