import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contrast } from "./chat-ui-checks.js";
import { chatSteps, launchChromium, screenshotDir, startVite } from "./helpers.js";

const patient = { timeout: 30_000 };

/**
 * What a person used to ChatGPT or Claude.ai reaches for, on `pnpm dev:mock`: the shortcut printed for their
 * platform, Copy on a message, Jump to latest where the eye looks, a sign of work, Send again after /compact
 * cleared a too-long card, a cut-off reply with Continue, readable text in dark mode.
 */
describe("the chat people expect, on pnpm dev:mock in Chromium", () => {
  let server: Awaited<ReturnType<typeof startVite>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const shot = (name: string) => page.screenshot({ path: join(screenshotDir, `chat-ui-${name}.png`) });
  const { composer, waitUntilReady, sendAndWait } = chatSteps(() => page, patient);
  const list = () => page.getByRole("region", { name: "Messages" });

  beforeAll(async () => {
    server = await startVite("dev/vite.config.ts");
    browser = await launchChromium();
    context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      permissions: ["clipboard-read", "clipboard-write"],
    });
    page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${server.url}?theme=light`);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("should print the command menu's shortcut for the platform: Ctrl+K on Linux, ⌘K on a Mac", async () => {
    await waitUntilReady();
    const header = page.locator(".demo-commands [data-nacre-command-menu-shortcut]");
    await expect.poll(() => header.textContent(), patient).toBe("Ctrl+K");
    await page.keyboard.press("Control+k");
    const dialog = page.getByRole("dialog", { name: "Command menu" });
    await expect.poll(() => dialog.locator("[data-nacre-command-menu-shortcut]").textContent(), patient).toBe("Ctrl+K");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });

    const mac = await context.newPage();
    await mac.addInitScript(() => {
      Object.defineProperty(Navigator.prototype, "platform", { get: () => "MacIntel" });
      Object.defineProperty(Navigator.prototype, "userAgentData", { get: () => ({ platform: "macOS" }) });
    });
    await mac.goto(`${server.url}?theme=light`);
    await expect
      .poll(() => mac.locator(".demo-commands [data-nacre-command-menu-shortcut]").textContent(), patient)
      .toBe("⌘K");
    await mac.close();
  });

  it("should copy a message as Markdown from its actions, shown on hover", async () => {
    const reply = page.locator('[data-nacre-message][data-role="assistant"]:not([data-placeholder])').last();
    const actions = reply.locator("[data-nacre-message-actions]");
    expect(await actions.count()).toBe(1);
    // The actions take no room of their own: on the role label's line, above the text, in every message (a
    // person's bubble has no blank line at its bottom), and showing them moves nothing.
    for (const message of await page
      .locator("[data-nacre-message]:has([data-nacre-message-actions]):has([data-nacre-message-text])")
      .all()) {
      const [row, text] = await Promise.all([
        message.locator("[data-nacre-message-actions]").boundingBox(),
        message.locator("[data-nacre-message-text]").first().boundingBox(),
      ]);
      if (row && text) expect(row.y + row.height / 2).toBeLessThan(text.y);
    }
    const height = (await reply.boundingBox())?.height;
    await reply.hover();
    await expect.poll(() => actions.evaluate((node) => getComputedStyle(node).opacity), patient).toBe("1");
    expect((await reply.boundingBox())?.height).toBe(height);
    await shot("01-message-actions");
    await actions.locator("[data-nacre-message-copy]").click();
    const seq = Number(await reply.getAttribute("data-seq"));
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied.length).toBeGreaterThan(0);
    // The Markdown as written, not the rendered text: the reply's own words are in it.
    const firstWords = ((await reply.locator("[data-nacre-message-text]").first().textContent()) ?? "").slice(0, 20);
    expect(copied.replace(/[*_`#>\-\s]+/g, " ")).toContain(firstWords.replace(/[*_`#>\-\s]+/g, " ").trim());
    expect(seq).toBeGreaterThan(0);
  });

  it("should float Jump to latest inside the list's visible box while reading up, and take the reader to the end", async () => {
    await list().hover();
    await page.mouse.wheel(0, -3000);
    const jump = page.locator('[data-nacre-jump-to-latest][data-state="visible"]');
    await jump.waitFor(patient);
    const [button, box] = await Promise.all([jump.boundingBox(), list().boundingBox()]);
    if (!button || !box) throw new Error("no boxes");
    expect(button.y).toBeGreaterThanOrEqual(box.y);
    expect(button.y + button.height).toBeLessThanOrEqual(box.y + box.height);
    expect(box.y + box.height - (button.y + button.height)).toBeLessThan(60);
    await shot("02-jump-to-latest");
    await jump.click();
    await expect
      .poll(() => list().evaluate((node) => node.scrollHeight - node.scrollTop - node.clientHeight), patient)
      .toBeLessThan(60);
    await expect.poll(() => jump.count(), patient).toBe(0);
  });

  it("should show a sign of work before the first word of a reply", async () => {
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => {
        if (document.querySelector("[data-nacre-pending]") && !seen.includes("pending")) seen.push("pending");
        const text = document.querySelector("[data-streaming] [data-nacre-message-text]")?.textContent ?? "";
        if (text && text !== "Writing…" && !seen.includes("words")) seen.push("words");
      }).observe(document.body, { childList: true, subtree: true });
    });
    // The script's first step: a fold before the answer (the row stays while it runs).
    await sendAndWait("What is still open before we publish?");
    expect(await page.evaluate(() => (window as unknown as { seen: string[] }).seen)).toEqual(["pending", "words"]);
  });

  it("should offer Send again after /compact cleared a too-long card, then Continue under a cut-off reply", async () => {
    await sendAndWait("Please list the commands we have."); // a quiet retry
    await sendAndWait("And the session commands?"); // a plain answer
    const words = "Here is the whole 4,000-line build log, what failed?";
    await sendAndWait(words); // too long
    await page.locator("[data-nacre-turn-problem]").waitFor(patient);
    await composer().fill("/compact");
    await composer().press("Enter");
    await page.getByText("The start of this chat is summarised.").waitFor(patient);
    await expect.poll(() => page.locator("[data-nacre-turn-problem]").count(), patient).toBe(0);
    const sendAgain = page.locator("[data-nacre-send-again]");
    await sendAgain.waitFor(patient);
    await shot("03-send-again-after-compact");
    const users = await page.locator('[data-nacre-message][data-role="user"]').count();
    await sendAgain.click();
    // Answered in place (the script's next step: a reply cut off at the output limit).
    const cutOff = page.locator("[data-nacre-message][data-nacre-cut-off]");
    await cutOff.waitFor(patient);
    expect(await page.locator('[data-nacre-message][data-role="user"]').count()).toBe(users);
    await expect.poll(() => cutOff.locator("[data-nacre-message-ending]").textContent(), patient).toBe("Cut off");
    const next = page.locator("[data-nacre-continue]");
    await next.waitFor(patient);
    await shot("04-cut-off-with-continue");
    await next.click();
    await page.locator("[data-nacre-message-items]").getByText("4. publish. That is the whole list.").waitFor(patient);
    await waitUntilReady();
    expect(await page.locator("[data-nacre-continue]").count()).toBe(0);
    expect(await page.locator('[data-nacre-message][data-role="user"]').last().textContent()).toContain("Continue");
  });

  it("should keep message text readable in dark mode (contrast ≥ 4.5:1)", async () => {
    await page.goto(`${server.url}?theme=dark`);
    await waitUntilReady();
    const pairs = await page.locator("[data-nacre-message]:not([data-placeholder])").evaluateAll((nodes) =>
      nodes.slice(-6).map((node) => {
        const text = node.querySelector("[data-nacre-message-text]") ?? node;
        let back: Element | null = node;
        let background = "rgba(0, 0, 0, 0)";
        while (back && /rgba\(0, 0, 0, 0\)|transparent/.test(background)) {
          background = getComputedStyle(back).backgroundColor;
          back = back.parentElement;
        }
        return [getComputedStyle(text).color, background] as const;
      }),
    );
    expect(pairs.length).toBeGreaterThan(0);
    for (const [color, background] of pairs) expect(contrast(color, background)).toBeGreaterThanOrEqual(4.5);
    await shot("05-dark");
  });

  it("should meet no page error on the way", () => {
    expect(pageErrors).toEqual([]);
  });
});
