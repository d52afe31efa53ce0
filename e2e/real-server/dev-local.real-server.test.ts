// `pnpm dev:local` in Chromium: the demo page on a real llama-server serving a real model at a real 2048-token
// window. Turns are sent until the chat folds; the line where the model's memory starts is opened to the summary
// the model wrote, and the screenshot lands in .artifacts/screenshots/dev-local-fold.png (the README's docs/images/dev-local-fold.png is one, looked at).
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { roundRobinTurns } from "../../scripts/real-server-turns.js";
import { chatSteps, launchChromium, type StartedPageServer, screenshotDir, startPageServer } from "../helpers.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 120_000 };

function startDevLocal(): Promise<StartedPageServer> {
  return startPageServer(
    "pnpm dev:local",
    (port) => ["--conditions=source", "--import", "tsx", "scripts/dev-local.ts", "--port", String(port)],
    { env: { LLAMA_SERVER_BIN: inject("llamaServerBinary"), NACRE_LOCAL_WINDOW: "2048" }, timeoutMs: 120_000 },
  );
}

describe("pnpm dev:local: the demo page on a real model", () => {
  let browser: Browser;
  let devLocal: StartedPageServer;
  beforeAll(async () => {
    browser = await launchChromium();
    devLocal = await startDevLocal();
  });
  afterAll(async () => {
    await browser?.close();
    await devLocal?.stop();
  });

  it("folds a real chat at a real 2048-token window, and the divider opens to the summary the model wrote", async () => {
    expect(devLocal.output()).toMatch(/llama-server \(pid \d+\) serving stories260K with a real 2048-token window/);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(devLocal.url);
    const steps = chatSteps(() => page, patient);
    await expect.poll(() => page.getByRole("combobox", { name: "Model" }).inputValue(), patient).toBe("stories260K");
    const footer = (await page.locator(".demo-footer").textContent()) ?? "";
    expect(footer).toMatch(/llama\.cpp server at 127\.0\.0\.1:\d+/);

    let sent = 0;
    for (const turn of roundRobinTurns(12)) {
      await steps.sendAndWait(turn.text);
      sent++;
      await steps.waitUntilFoldSettled();
      if ((await steps.dividerLine().count()) > 0) break;
    }
    expect(await steps.dividerLine().count(), `no fold after ${sent} turns`).toBe(1);
    expect(sent).toBeGreaterThanOrEqual(2);
    // The model answered every turn (a real answer, in its own words).
    const answers = page.locator('[data-nacre-message][data-role="assistant"]');
    expect(await answers.count()).toBeGreaterThanOrEqual(sent - 1);

    await steps.dividerLine().click();
    await steps.summaryOpened();
    const summary = (await page.locator("[data-nacre-summary-divider-content]").textContent()) ?? "";
    expect(summary.trim().length).toBeGreaterThan(0);
    await steps.dividerLine().scrollIntoViewIfNeeded();
    const shot = join(screenshotDir, "dev-local-fold.png");
    await page.screenshot({ path: shot });
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
