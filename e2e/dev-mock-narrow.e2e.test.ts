import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, repoRoot, screenshotDir, startVite } from "./helpers.js";

/** The demo on a 390×844 phone, in the system's dark theme: the chat takes the width, panels open from the header. */
describe("pnpm dev:mock at 390×844, dark", () => {
  let server: Awaited<ReturnType<typeof startVite>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const shot = (name: string) => page.screenshot({ path: join(screenshotDir, `dev-mock-narrow-${name}.png`) });
  const composer = () => page.getByRole("textbox", { name: "Message" });
  const messages = () => page.getByRole("region", { name: "Messages" });
  const horizontalOverflow = () =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  beforeAll(async () => {
    server = await startVite("dev/vite.config.ts");
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: "dark" });
    page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(server.url);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("should show the chat across the whole width with no horizontal scroll, in the system's dark theme", async () => {
    await messages().locator("[data-nacre-message]").first().waitFor({ timeout: 30_000 });
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    const box = await messages().boundingBox();
    expect(box?.width).toBeGreaterThanOrEqual(380);
    expect(await page.locator("#demo-chats").isVisible()).toBe(false);
    expect(await page.locator("#demo-aside").isVisible()).toBe(false);
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe("rgb(28, 25, 23)");
    await shot("01-open-dark");
  });

  it("should render a Markdown reply (heading, list, table, code with copy) without widening the page", async () => {
    // The mock script's third message is the plain (Markdown) answer.
    for (const text of ["What is still open?", "List the modules.", "And the rate limiter?"]) {
      await composer().fill(text);
      await composer().press("Enter");
      await page.getByRole("button", { name: "Send", exact: true }).waitFor({ timeout: 60_000 });
    }
    const reply = messages().locator("[data-nacre-markdown]").last();
    await reply.locator("h2").waitFor({ timeout: 30_000 });
    expect(await reply.locator("table").count()).toBe(1);
    expect(await reply.locator("li").count()).toBe(2);
    expect(await reply.getByRole("button", { name: "Copy" }).count()).toBe(1);
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
    await reply.scrollIntoViewIfNeeded();
    await shot("02-markdown-reply");
  });

  it("should open the chats and the context panel from the header, one at a time", async () => {
    await page.getByRole("button", { name: "Chats" }).click();
    expect(await page.locator("#demo-chats").isVisible()).toBe(true);
    await shot("03-chats-panel");
    await page.getByRole("button", { name: "Context" }).click();
    expect(await page.locator("#demo-chats").isVisible()).toBe(false);
    expect(await page.getByRole("meter", { name: "Context used" }).isVisible()).toBe(true);
    await shot("04-context-panel");
    await page.getByRole("button", { name: "Context" }).click();
    expect(await horizontalOverflow()).toBeLessThanOrEqual(0);
  });

  it("should honour ?theme=light over the system's dark", async () => {
    await page.goto(`${server.url}?theme=light`);
    await messages().locator("[data-nacre-message]").first().waitFor({ timeout: 30_000 });
    const background = await page.evaluate(
      () => getComputedStyle(document.querySelector(".demo") as Element).backgroundColor,
    );
    expect(background).toBe("rgb(255, 255, 255)");
    await shot("05-forced-light");
    expect(pageErrors).toEqual([]);
    expect(repoRoot).toBeTruthy();
  });
});
