// `pnpm dev:local` in Chromium: the demo page on a real llama-server serving a real model at a real 2048-token
// window. Turns are sent until the chat folds; the line where the model's memory starts is opened to the summary
// the model wrote, and the screenshot lands in .artifacts/screenshots/dev-local-fold.png (the README's docs/images/dev-local-fold.png is one, looked at).
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { roundRobinTurns } from "../../scripts/real-server-turns.js";
import { chatSteps, freePort, launchChromium, repoRoot, screenshotDir } from "../helpers.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 120_000 };

async function startDevLocal(): Promise<{ url: string; output: () => string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=source", "--import", "tsx", "scripts/dev-local.ts", "--port", String(port)],
    {
      cwd: repoRoot,
      env: { ...process.env, LLAMA_SERVER_BIN: inject("llamaServerBinary"), NACRE_LOCAL_WINDOW: "2048" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pnpm dev:local exited early:\n${output}`);
    const up = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`pnpm dev:local was not up within 120 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

describe("pnpm dev:local: the demo page on a real model", () => {
  let browser: Browser;
  let devLocal: Awaited<ReturnType<typeof startDevLocal>>;
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
