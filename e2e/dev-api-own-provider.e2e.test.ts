import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, repoRoot, screenshotDir, startVite } from "./helpers.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };

/** `node --conditions=source --import tsx dev/api/start-fake-provider.ts …`, as the README says; its base URL. */
async function startFakeProviderScript(
  args: readonly string[],
): Promise<{ baseURL: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=source", "--import", "tsx", "dev/api/start-fake-provider.ts", ...args],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const baseURL = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`start-fake-provider.ts printed no URL in 60 s:\n${output}`)),
      60_000,
    );
    const read = (chunk: unknown) => {
      output += String(chunk);
      const found = /listening at (\S+)/.exec(output)?.[1];
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", () => reject(new Error(`start-fake-provider.ts exited:\n${output}`)));
  });
  return {
    baseURL,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/**
 * "Use it with your own provider" (README), tried as a new user would: the fake provider started on its own,
 * asking for a key, and `pnpm dev` pointed at it with NACRE_* variables only. The key must never reach the page.
 */
describe("pnpm dev with your own provider (NACRE_* variables) in Chromium", () => {
  const key = "sk-nacre-e2e-7f3a9c1d-never-in-the-page";
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** Opens `pnpm dev` in a fresh context, recording everything the page sent and received. */
  async function openPage(url: string) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page: Page = await context.newPage();
    const pageErrors: string[] = [];
    const seen: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    page.on("request", (request) => seen.push(`${request.url()}\n${JSON.stringify(request.headers())}`));
    page.on("response", (response) => {
      void response.text().then(
        (text) => seen.push(text),
        () => undefined,
      );
    });
    await page.goto(url);
    return { context, page, pageErrors, seen };
  }

  const setups = [
    { dialect: "openai", provider: "openai-compatible", name: /^OpenAI-compatible server at 127\.0\.0\.1:\d+\/v1$/ },
    { dialect: "anthropic", provider: "anthropic", name: /^Anthropic at 127\.0\.0\.1:\d+\/v1$/ },
    { dialect: "ollama", provider: "ollama", name: /^Ollama at 127\.0\.0\.1:\d+$/ },
  ] as const;

  for (const setup of setups) {
    it(`should answer through NACRE_PROVIDER=${setup.provider}, with the key added by the dev server only`, async () => {
      const fake = await startFakeProviderScript(["--dialect", setup.dialect, "--port", "0", "--api-key", key]);
      const server = await startVite("dev/vite.api.config.ts", {
        NACRE_PROVIDER: setup.provider,
        NACRE_BASE_URL: fake.baseURL,
        NACRE_API_KEY: key,
        NACRE_MODEL: "chat-8k",
      });
      try {
        const { context, page, pageErrors, seen } = await openPage(server.url);
        const composer = page.getByRole("textbox", { name: "Message" });
        await composer.waitFor(patient);
        await expect.poll(() => page.getByRole("combobox", { name: "Model" }).inputValue(), patient).toBe("chat-8k");
        const footer = (await page.locator(".demo-footer").textContent()) ?? "";
        expect(/^Your provider: (.+?)\. /.exec(footer)?.[1]).toMatch(setup.name);
        expect(footer).toContain("The dev server adds its key (NACRE_API_KEY); the key never reaches this page.");
        const question = `Hello from the ${setup.provider} setup: which model are you?`;
        await composer.fill(question);
        await composer.press("Enter");
        const answer = page.locator('[data-nacre-message][data-role="assistant"]');
        await expect.poll(() => answer.count(), patient).toBe(1);
        await expect.poll(() => page.locator("[data-streaming]").count(), patient).toBe(0);
        expect(await answer.textContent()).toContain(`You asked: “${question}”`);
        expect(await answer.textContent()).toContain("I am chat-8k");
        await page.screenshot({ path: join(screenshotDir, `dev-api-own-provider-${setup.dialect}.png`) });
        // Nothing the page sent or received carried the key.
        expect(seen.length).toBeGreaterThan(5);
        expect(seen.filter((text) => text.includes(key))).toEqual([]);
        expect(pageErrors).toEqual([]);
        await context.close();
      } finally {
        await server.stop();
        await fake.stop();
      }
    });
  }

  it("should say what went wrong when the provider refuses the key", async () => {
    const fake = await startFakeProviderScript(["--dialect", "openai", "--port", "0", "--api-key", key]);
    const server = await startVite("dev/vite.api.config.ts", {
      NACRE_PROVIDER: "openai-compatible",
      NACRE_BASE_URL: fake.baseURL,
      NACRE_API_KEY: "sk-a-wrong-key",
    });
    try {
      const { context, page } = await openPage(server.url);
      const alert = page.getByRole("alert");
      await alert.waitFor(patient);
      expect(await alert.textContent()).toContain("The provider did not accept the key");
      expect(await alert.textContent()).toContain("NACRE_API_KEY");
      await page.screenshot({ path: join(screenshotDir, "dev-api-own-provider-wrong-key.png") });
      await context.close();
    } finally {
      await server.stop();
      await fake.stop();
    }
  });
});
