import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatSteps, launchChromium, screenshotDir, startVite } from "./helpers.js";

const patient = { timeout: 60_000 };

/**
 * The flows of a long chat, on `pnpm dev:mock`, with a screenshot of each (docs/nacre.md shows them): the
 * divider that opens, messages the model no longer reads set apart, the too-long card with both counts and the
 * meter on the provider's count, `/compact` clearing the card and then saying why nothing is left, and
 * "Send again" answered.
 */
describe("Nacre's flows on pnpm dev:mock", () => {
  let server: Awaited<ReturnType<typeof startVite>>;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const shot = async (name: string) => {
    await page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))),
    );
    await page.screenshot({ path: join(screenshotDir, `flows-${name}.png`) });
  };
  const { composer, dividerLine, summaryOpened, waitUntilReady, sendAndWait } = chatSteps(() => page, patient);
  const card = () => page.locator("[data-nacre-turn-problem]");
  const meter = () => page.getByRole("meter", { name: "Context used" });
  const messages = () => page.getByRole("region", { name: "Messages" });

  beforeAll(async () => {
    server = await startVite("dev/vite.config.ts");
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${server.url}?theme=light`);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("should show a closed divider that looks like it opens, with the folded messages above set apart", async () => {
    await expect.poll(() => dividerLine().count(), patient).toBe(1);
    expect(await dividerLine().getAttribute("aria-expanded")).toBe("false");
    expect(await dividerLine().locator("[data-nacre-summary-divider-chevron]").count()).toBe(1);
    await dividerLine().scrollIntoViewIfNeeded();
    await messages().evaluate((node) => node.scrollBy(0, -node.clientHeight / 3));
    const folded = page.locator("[data-nacre-message][data-folded]").last();
    await expect.poll(() => folded.isVisible(), patient).toBe(true);
    // Set apart quietly: a border, the text at full contrast.
    const style = await folded.evaluate((node) => {
      const computed = getComputedStyle(node);
      return { opacity: computed.opacity, border: computed.borderLeftWidth };
    });
    expect(style.opacity).toBe("1");
    expect(style.border).not.toBe("0px");
    await shot("01-divider-closed");
    await dividerLine().click();
    await expect.poll(() => dividerLine().getAttribute("aria-expanded"), patient).toBe("true");
    await summaryOpened();
    await shot("02-divider-open");
    await dividerLine().click();
  });

  it("should show the too-long card with what the provider counted against the estimate, and the meter on that count", async () => {
    // The mock script's cycle: a fold, a quiet retry, an answer, then a too-long refusal.
    for (const text of ["What is still open?", "List the modules.", "And the rate limiter?"]) await sendAndWait(text);
    await sendAndWait("Here is the whole 4,000-line build log, what failed?");
    await card().waitFor(patient);
    await card()
      .getByText(/^The provider counted 33,377 tokens where the estimate said 1,280\.$/)
      .waitFor(patient);
    await expect.poll(() => meter().getAttribute("data-source"), patient).toBe("provider");
    expect(await meter().getAttribute("aria-valuetext")).toContain("as the provider counted");
    await card().getByRole("button", { name: "Send again" }).waitFor();
    await card().scrollIntoViewIfNeeded();
    await shot("03-too-long-card");
  });

  it("should clear the card after /compact folds, then say why nothing is left to fold", async () => {
    await composer().fill("/compact");
    await composer().press("Enter");
    await page.getByText("The start of this chat is summarised.").waitFor(patient);
    await expect.poll(() => card().count(), patient).toBe(0);
    await expect.poll(() => meter().getAttribute("data-source"), patient).toBe("estimate");
    await shot("04-compact-cleared-the-card");
    await composer().fill("/compact");
    await composer().press("Enter");
    await page
      .getByText("Nothing left to summarise: everything before the last message is already in the summary.")
      .waitFor(patient);
    await shot("05-compact-nothing-left");
  });

  it("should answer the message sent again from the card, and the card should go away", async () => {
    // The message /compact left unanswered is sent again from its row (the script's cycle: a cut-off reply), then
    // a fold, a quiet retry, a plain answer, and the too-long refusal.
    await page.locator("[data-nacre-send-again]").click();
    await page.locator("[data-nacre-continue]").waitFor(patient);
    await waitUntilReady();
    for (const text of ["What is still open?", "List the modules.", "And the rate limiter?"]) await sendAndWait(text);
    await sendAndWait("Here is the whole 4,000-line build log, what failed?");
    await card().waitFor(patient);
    await card().getByRole("button", { name: "Send again" }).click();
    await expect.poll(() => card().count(), patient).toBe(0);
    await waitUntilReady();
    await shot("06-sent-again-answered");
  });

  it("should meet no page error on the way", () => {
    expect(pageErrors).toEqual([]);
  });
});
