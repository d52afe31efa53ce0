import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, screenshotDir, startVite } from "./helpers.js";

describe("pnpm dev:mock in Chromium", () => {
  let server: Awaited<ReturnType<typeof startVite>>;
  let browser: Browser;

  beforeAll(async () => {
    server = await startVite("dev/vite.config.ts");
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("should stream a reply to a typed message and show the new compaction line", async () => {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    await page.goto(server.url);
    await expect.poll(() => page.getByText("Earlier messages are summarised for Mock Large").count()).toBe(1);
    await page.getByRole("textbox", { name: "Message" }).fill("What is still open?");
    await page.getByRole("button", { name: "Send" }).click();
    // The fold runs first and says so; then the reply streams in.
    await page.getByText("Summarising earlier messages…").waitFor();
    await page.locator("[data-streaming]").waitFor();
    await page.getByText(/Folded the start of the chat into a summary; here is the answer/).waitFor();
    await page.getByRole("button", { name: "Send" }).isEnabled();
    const line = page.getByTestId("summary-line");
    await expect.poll(() => line.count()).toBe(1);
    await line.locator("summary").click();
    await page.getByText(/Still open: the rate limiter's limits, and the dark theme/).waitFor();
    await page.screenshot({ path: join(screenshotDir, "dev-mock-chat.png"), fullPage: false });
    await page.close();
  });
});
