import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatSteps, launchChromium, startVite } from "./helpers.js";

const patient = { timeout: 30_000 };

/**
 * Edit a message in place, ask for another answer, move between the versions with the picker, on `pnpm
 * dev:mock` (the mock engine declares `branches`), by mouse and by keyboard; a reload keeps every version.
 */
describe("versions on pnpm dev:mock in Chromium: edit, regenerate, the picker", () => {
  let server: Awaited<ReturnType<typeof startVite>>;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const { waitUntilReady, sendAndWait } = chatSteps(() => page, patient);
  const rows = () => page.locator("[data-nacre-message]:not([data-placeholder])");
  const texts = () => rows().locator("[data-nacre-message-text]").allTextContents();
  const row = (text: string) => page.locator("[data-nacre-message]", { hasText: text });

  beforeAll(async () => {
    server = await startVite("dev/vite.config.ts");
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${server.url}?theme=light`);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("should edit the first message in place, regenerate its answer, and move between all versions", async () => {
    await waitUntilReady();
    await page
      .getByRole("navigation", { name: "Chats" })
      .getByRole("button", { name: "New chat", exact: true })
      .click();
    await expect.poll(() => rows().count(), patient).toBe(0);
    await sendAndWait("Plan a day in Lisbon");
    await sendAndWait("And the evening?");

    // Edit: the Composer in place of the person's message, its words in it.
    const first = row("Plan a day in Lisbon").first();
    await first.hover();
    await first.getByRole("button", { name: "Edit" }).click();
    const editor = page.getByRole("textbox", { name: "Edit message" });
    await expect.poll(() => editor.inputValue(), patient).toBe("Plan a day in Lisbon");
    await editor.fill("Plan a day in Porto");
    await editor.press("Enter");
    await expect.poll(() => page.locator('[data-nacre-message][data-role="user"]').count(), patient).toBe(1);
    await waitUntilReady();
    const edited = row("Plan a day in Porto").first();
    await expect.poll(() => edited.locator("[data-nacre-branch-count]").textContent(), patient).toContain("2 / 2");

    // Regenerate the answer twice: three versions of it.
    for (const count of [2, 3]) {
      const answer = page.locator('[data-nacre-message][data-role="assistant"]').last();
      await answer.hover();
      await answer.getByRole("button", { name: "Regenerate" }).click();
      await waitUntilReady();
      await expect
        .poll(
          () =>
            page
              .locator('[data-nacre-message][data-role="assistant"]')
              .last()
              .locator("[data-nacre-branch-count]")
              .textContent(),
          patient,
        )
        .toContain(`${count} / ${count}`);
    }

    // The picker by keyboard: back to the first answer, then the first version of the person's message.
    const answerPicker = page
      .locator('[data-nacre-message][data-role="assistant"]')
      .last()
      .getByRole("group", { name: "Versions" });
    await answerPicker.getByRole("button", { name: "Previous version" }).focus();
    await page.keyboard.press("Enter");
    await expect
      .poll(() => answerPicker.locator("[data-nacre-branch-count]").textContent(), patient)
      .toContain("2 / 3");
    // The picker gives the focus to the chosen version's row a frame after that row is shown: wait for it, as a
    // person's next key press comes later than a frame.
    await expect
      .poll(
        () =>
          answerPicker
            .getByRole("button", { name: "Previous version" })
            .evaluate((button) => button === document.activeElement),
        patient,
      )
      .toBe(true);
    await page.keyboard.press("Enter");
    await expect
      .poll(() => answerPicker.locator("[data-nacre-branch-count]").textContent(), patient)
      .toContain("1 / 3");
    await edited.getByRole("button", { name: "Previous version" }).click();
    await expect.poll(texts, patient).toContain("Plan a day in Lisbon");
    await expect.poll(texts, patient).toContain("And the evening?");
    expect(await texts()).not.toContain("Plan a day in Porto");

    // A reload keeps every version, and the branch chosen: the first version, its person's message one of two.
    await page.reload();
    await waitUntilReady();
    const versions = page
      .locator('[data-nacre-message][data-role="user"]')
      .first()
      .locator("[data-nacre-branch-count]");
    await expect.poll(() => versions.textContent(), patient).toContain("1 / 2");
    await expect.poll(texts, patient).toContain("And the evening?");
    expect(await texts()).toContain("Plan a day in Lisbon");
    expect(await texts()).not.toContain("Plan a day in Porto");
    // The other version is still a click away.
    await page
      .locator('[data-nacre-message][data-role="user"]')
      .first()
      .getByRole("button", { name: "Next version" })
      .click();
    await expect.poll(texts, patient).toContain("Plan a day in Porto");
  });

  it("should meet no page error on the way", () => {
    expect(pageErrors).toEqual([]);
  });
});
