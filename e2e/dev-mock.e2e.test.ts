import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatListScenario } from "./chat-list-steps.js";
import { chatSteps, launchChromium, screenshotDir, startVite } from "./helpers.js";

/** Drives `pnpm dev:mock` like a person: reads, scrolls, opens the line, folds, follows a problem card. */
describe("pnpm dev:mock in Chromium", () => {
  let server: Awaited<ReturnType<typeof startVite>>;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  const shot = (name: string) => page.screenshot({ path: join(screenshotDir, `dev-mock-${name}.png`) });
  const { composer, dividerLine, summaryOpened, waitUntilReady, sendAndWait } = chatSteps(() => page, {
    timeout: 20_000,
  });
  const messages = () => page.getByRole("region", { name: "Messages" });

  beforeAll(async () => {
    server = await startVite("dev/vite.config.ts");
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(server.url);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("should open on the real transcript, scrolled to its end, with one quiet line where the model's memory starts", async () => {
    await expect.poll(() => dividerLine().count(), { timeout: 20_000 }).toBe(1);
    await expect
      .poll(() => dividerLine().textContent(), { timeout: 20_000 })
      .toMatch(/^Earlier messages are summarised for Mock Large/);
    await expect.poll(() => dividerLine().getAttribute("aria-expanded"), { timeout: 20_000 }).toBe("false");
    // The page follows the end of the chat.
    await expect
      .poll(() => messages().evaluate((node) => node.scrollHeight - node.scrollTop - node.clientHeight))
      .toBeLessThan(60);
    await page.getByRole("meter", { name: "Context used" }).waitFor();
    await shot("01-open");
  });

  it("should keep every message when scrolled to the top, folded ones included", async () => {
    await messages().hover();
    for (let step = 0; step < 80; step += 1) {
      await page.mouse.wheel(0, -4000);
      if (await messages().evaluate((node) => node.scrollTop === 0)) break;
    }
    const first = messages().locator("[data-nacre-message]").first();
    await expect
      .poll(() => first.textContent())
      .toContain("initialize a bun typescript project for a CLI tool called minsky");
    expect(await first.getAttribute("data-folded")).toBe("");
    expect(await first.isVisible()).toBe(true);
    await shot("02-scrolled-to-the-start");
  });

  it("should open the line to the summary and read it", async () => {
    await dividerLine().scrollIntoViewIfNeeded();
    await dividerLine().click();
    await expect.poll(() => dividerLine().getAttribute("aria-expanded"), { timeout: 20_000 }).toBe("true");
    const summary = page.locator("[data-nacre-summary-text]");
    await expect.poll(() => summary.textContent(), { timeout: 20_000 }).toMatch(/What they asked so far:/);
    await expect.poll(() => summary.textContent(), { timeout: 20_000 }).toMatch(/initialize a bun typescript project/);
    await page.getByText("Written by mock-small").waitFor();
    await summaryOpened();
    await shot("03-summary-open");
    await dividerLine().click();
  });

  it("should say it is summarising while a fold runs in a turn, then move the line", async () => {
    const firstKeptBefore = await page
      .locator("[data-nacre-divider-row] + [data-nacre-message]")
      .getAttribute("data-seq");
    await composer().fill("What is still open before we publish?");
    await composer().press("Enter");
    await page.getByText("Summarising earlier messages…").waitFor();
    await shot("04-summarising");
    await page.locator("[data-streaming]").waitFor();
    await waitUntilReady();
    await expect.poll(() => dividerLine().count(), { timeout: 20_000 }).toBe(1);
    const firstKeptAfter = await page
      .locator("[data-nacre-divider-row] + [data-nacre-message]")
      .getAttribute("data-seq");
    expect(Number(firstKeptAfter)).toBeGreaterThan(Number(firstKeptBefore));
    // In the list (the live region repeats the finished reply for screen readers).
    await page
      .locator("[data-nacre-message-items]")
      .getByText(/I summarised the start of this chat so that Mock Large keeps reading it all/)
      .waitFor();
  });

  it("should note a quiet retry in Health and answer anyway", async () => {
    await sendAndWait("Please list the commands we have.");
    const health = page.getByRole("region", { name: "Health" });
    await health.getByText("Quiet retry").waitFor();
    await health.getByText(/refused the request as too long \(window 32000 tokens\)/).waitFor();
    await page
      .locator("[data-nacre-message-items]")
      .getByText(/it was shortened and sent again, quietly/)
      .waitFor();
    // The whole picture: the line opened to its summary, the quiet retry in Health, the meter.
    await dividerLine().click();
    await page.locator("[data-nacre-summary-text]").waitFor();
    await dividerLine().scrollIntoViewIfNeeded();
    await summaryOpened();
    await shot("05-quiet-retry-in-health");
    await dividerLine().click();
  });

  it("should run the ⌘K action, then show it disabled with the reason", async () => {
    await page.keyboard.press("Control+k");
    const dialog = page.getByRole("dialog", { name: "Command menu" });
    await dialog.waitFor();
    const action = dialog.getByRole("option", { name: /Summarise the start of this chat/ });
    await expect.poll(() => action.getAttribute("aria-disabled"), { timeout: 20_000 }).toBe("false");
    await page.keyboard.type("summ");
    await shot("06-command-menu");
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "detached" });
    await expect
      .poll(() => dividerLine().textContent(), { timeout: 20_000 })
      .toMatch(/^Earlier messages are summarised for Mock Large/);
    await expect
      .poll(() => page.locator("[data-nacre-divider-row] + [data-nacre-message]").getAttribute("data-seq"))
      .toBe(await page.locator('[data-nacre-message][data-role="user"]').last().getAttribute("data-seq"));

    await page.keyboard.press("Meta+k");
    await dialog.waitFor();
    await expect.poll(() => action.getAttribute("aria-disabled"), { timeout: 20_000 }).toBe("true");
    // Everything before the newest turn is in the summary now: the reason says so, not "yet".
    await dialog.getByText("Everything before the last message is already summarised").waitFor();
    await shot("07-command-menu-nothing-to-fold");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
  });

  it("should fold with /compact [what to keep] from the composer", async () => {
    await sendAndWait("And the session commands?");
    await composer().fill("/compact the bun commands");
    await page.getByText("/compact [what to keep] summarises the start of this chat now.").waitFor();
    await page.getByRole("button", { name: "Summarise", exact: true }).waitFor();
    await composer().press("Enter");
    await page.getByText("The start of this chat is summarised.").waitFor();
    await dividerLine().click();
    await expect
      .poll(() => page.locator("[data-nacre-summary-text]").textContent())
      .toMatch(/Kept above all: the bun commands/);
    await summaryOpened();
    await shot("08-compact-with-focus");
    await dividerLine().click();
  });

  it("should show a too-long card whose one next step carries the message into a new chat's box", async () => {
    const words = "Here is the whole 4,000-line build log, what failed?";
    await sendAndWait(words);
    const card = page.locator("[data-nacre-turn-problem]");
    await card.waitFor();
    expect(await card.getAttribute("data-kind")).toBe("too-long");
    await card.getByRole("button", { name: "What the provider said" }).click();
    await card.getByText(/maximum context length is 32000 tokens/).waitFor();
    const next = card.getByRole("button", { name: "Start a new chat with this message" });
    expect(await card.locator("[data-nacre-turn-problem-action]").count()).toBe(1);
    await shot("09-too-long-card");
    await next.click();
    await expect.poll(() => composer().inputValue(), { timeout: 20_000 }).toBe(words);
    const chats = page.getByRole("navigation", { name: "Chats" });
    // Listed at once as a new chat; it takes its title from its first message once sent.
    await expect.poll(() => chats.locator('[aria-current="page"]').textContent(), { timeout: 20_000 }).toBe("New chat");
    await expect.poll(() => page.locator("[data-nacre-message]").count(), { timeout: 20_000 }).toBe(0);
    await shot("10-new-chat-with-the-message");
    // The message was not lost: the first chat still has it, and the new chat can send it.
    await composer().press("Enter");
    await expect
      .poll(() => page.locator('[data-nacre-message][data-role="user"]').count(), { timeout: 20_000 })
      .toBe(1);
    await waitUntilReady();
    await expect
      .poll(() => page.locator('[data-nacre-message][data-role="user"]').textContent(), { timeout: 20_000 })
      .toContain(words);
  });

  it("should create, rename, switch and delete chats in the list, and keep it across a reload", async () => {
    await chatListScenario(page, { timeout: 20_000 });
  });

  it("should meet no page error on the way", () => {
    expect(pageErrors).toEqual([]);
  });
});
