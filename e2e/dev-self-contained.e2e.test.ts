import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConversationFile, recordedTurns } from "@conch/fake-provider";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordedConversation } from "../dev/api/fake-provider.js";
import { chatSteps, launchChromium, startVite } from "./helpers.js";

const patient = { timeout: 60_000 };
const demoChats = fileURLToPath(new URL("../test-fixtures/chats", import.meta.url));

/**
 * A fresh clone has only what the project carries: both dev servers show the recorded chats and the refusals in
 * real providers' words from `test-fixtures` (nothing outside bench/ reads data beside the repository:
 * scripts/test-fixtures.test.ts).
 */
describe("the demo on the project's own data", () => {
  const env = { NACRE_PROVIDER: "fake" };
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe("pnpm dev", () => {
    let server: Awaited<ReturnType<typeof startVite>>;
    let page: Page;
    const pageErrors: string[] = [];
    const { composer, waitUntilReady, sendAndWait } = chatSteps(() => page, patient);
    const assistantMessages = () => page.locator('[data-nacre-message][data-role="assistant"]');
    const footerStatus = () => page.locator(".demo-footer-status");

    beforeAll(async () => {
      server = await startVite("dev/vite.api.config.ts", env);
      page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      await page.goto(server.url);
    });
    afterAll(async () => {
      await server?.stop();
    });

    it("should send a recorded turn of the chat the project carries and get its recorded reply", async () => {
      const conversation = loadConversationFile(join(demoChats, recordedConversation.file)).find(
        (candidate) => candidate.id === recordedConversation.id,
      );
      const first = conversation ? recordedTurns(conversation.messages)[0] : undefined;
      const reply = first?.rounds.find((round) => round.reply.trim() !== "")?.reply.trim() ?? "";
      expect(reply).not.toBe("");
      await waitUntilReady();
      const button = page.getByRole("button", { name: /^Send recorded turn 1 of \d+$/ });
      await button.click();
      await expect.poll(() => assistantMessages().count(), patient).toBe(1);
      await waitUntilReady();
      // The recorded reply's opening words, as the page shows them (Markdown rendered, so compare words only).
      const opening = (reply.split("\n")[0] ?? "")
        .replace(/[*_`#]/g, "")
        .split(/\s+/)
        .slice(0, 6)
        .join(" ");
      await expect
        .poll(async () => ((await assistantMessages().first().textContent()) ?? "").replace(/\s+/g, " "), patient)
        .toContain(opening);
      await page.getByRole("button", { name: /^Send recorded turn 2 of \d+$/ }).waitFor(patient);
    });

    it("should refuse for length in a real provider's words and heal quietly", async () => {
      const words = page.getByRole("combobox", { name: "in the words of" });
      // Every provider's words are offered: the bodies come from test-fixtures/refusals.
      expect(await words.locator("option").count()).toBeGreaterThan(1);
      await words.selectOption({ label: "Anthropic" });
      await page.getByRole("radio", { name: "Refuse once" }).click();
      await expect.poll(() => footerStatus().textContent(), patient).toMatch(/^The next request is refused/);
      const question = "What is still open in the task spec for init?";
      await sendAndWait(question);
      await expect.poll(() => assistantMessages().last().textContent(), patient).toContain(`You asked: “${question}”`);
      await page.getByRole("region", { name: "Health" }).getByText("Quiet retry").waitFor(patient);
      expect(await page.locator("[data-nacre-turn-problem]").count()).toBe(0);
      expect(await composer().isEnabled()).toBe(true);
    });

    it("should meet no page error", () => {
      expect(pageErrors).toEqual([]);
    });
  });

  describe("pnpm dev:mock", () => {
    let server: Awaited<ReturnType<typeof startVite>>;
    let page: Page;

    beforeAll(async () => {
      server = await startVite("dev/vite.config.ts", env);
      page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      await page.goto(server.url);
    });
    afterAll(async () => {
      await server?.stop();
    });

    it("should open on the recorded chat the project carries, not a generated one", async () => {
      await page
        .getByText(/Setting Up Minsky CLI with Bun/)
        .first()
        .waitFor(patient);
      await page.getByText("initialize a bun typescript project for a CLI tool called minsky").first().waitFor(patient);
    });
  });
});
