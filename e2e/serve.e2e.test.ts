import { loadConversations } from "@conch/fake-provider";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoFakeProvider, startDemoFakeProvider } from "../dev/api/fake-provider.js";
import { conversationsDir } from "../dev/transcript-plugin.js";
import { chatListScenario } from "./chat-list-steps.js";
import { chatSteps, launchChromium, recordedDemoTurns, repoRoot } from "./helpers.js";
import { type ServeProcess, serveRefusal, startServe } from "./serve-helpers.js";

const patient = { timeout: 60_000 };
const apiKey = "sk-or-e2e-serve-0123456789-never-in-the-page";

/**
 * `pnpm serve` in Chromium: the built page on a remote engine, the API engine on the server talking to a fake
 * OpenRouter that wants a key (named by NACRE_* as a real provider would be).
 */
describe("pnpm serve (the page on the engine server) in Chromium", () => {
  let fake: DemoFakeProvider;
  let serve: ServeProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const traffic: string[] = [];
  const turns = recordedDemoTurns();
  const { userMessages, dividerLine, waitUntilReady, waitUntilFoldSettled, sendAndWait, composer, continueCutOff } =
    chatSteps(() => page, patient);
  const assistantMessages = () => page.locator('[data-nacre-message][data-role="assistant"]');

  beforeAll(async () => {
    fake = await startDemoFakeProvider({
      dialect: "openrouter",
      apiKey,
      conversations: loadConversations(conversationsDir(repoRoot)),
      chunkDelayMs: 20,
    });
    serve = await startServe({
      NACRE_PROVIDER: "openrouter",
      NACRE_BASE_URL: fake.server.baseURL,
      NACRE_API_KEY: apiKey,
      NACRE_MODEL: "chat-8k",
      // Not used: a provider on 127.0.0.1 is on this computer, where the chat's own model summarises (README).
      NACRE_CHEAP_MODEL: "cheap",
    });
    browser = await launchChromium();
    context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      permissions: ["clipboard-read", "clipboard-write"],
    });
    page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    page.on("request", (request) => {
      traffic.push(request.url(), JSON.stringify(request.headers()), request.postData() ?? "");
    });
    page.on("response", (response) => {
      traffic.push(JSON.stringify(response.headers()));
      void response.text().then(
        (body) => traffic.push(body),
        () => undefined,
      );
    });
    await page.goto(serve.url);
  });
  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
    await fake?.server.close();
  });

  it("should open the chat on the server's model, with no provider code and no key in the page", async () => {
    await waitUntilReady();
    await expect.poll(() => page.getByRole("combobox", { name: "Model" }).inputValue(), patient).toBe("chat-8k");
    expect(serve.output()).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/m);
  });

  it("should fold within a handful of real turns and open the divider to the summary", async () => {
    const summariserRequests = () =>
      fake.server.chatRequests().filter((request) => JSON.stringify(request.body).includes("<chat-lines>"));
    let sent = 0;
    for (const turn of turns) {
      await sendAndWait(turn.person);
      sent += 1;
      await waitUntilFoldSettled();
      // A fold ahead of the need runs after a turn: once its summariser has been asked, the divider shows the
      // summary with no further turn (after the last message when the fold took every one shown), never a
      // "Summarising…" that goes away with nothing in its place.
      if (summariserRequests().length > 0 || (await dividerLine().count()) > 0) break;
    }
    expect(sent).toBeLessThanOrEqual(6);
    await expect.poll(() => dividerLine().textContent(), patient).toMatch(/^Earlier messages are summarised/);
    expect(await userMessages().count()).toBe(sent);
    // The provider is on this computer (127.0.0.1), so only the chat's own model summarises (summariserModels).
    expect(summariserRequests().map((request) => request.model)).toContain("chat-8k");
    await dividerLine().click();
    await expect.poll(() => dividerLine().getAttribute("aria-expanded"), patient).toBe("true");
    const summary = (await page.locator("[data-nacre-summary-text]").textContent()) ?? "";
    expect(summary.length).toBeGreaterThan(40);
    // The key went to the provider, from the server.
    const requests = fake.server.chatRequests();
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((request) => request.headers.authorization === `Bearer ${apiKey}`)).toBe(true);
  });

  it("should finish an answer after a reload mid-answer", async () => {
    await waitUntilReady();
    const before = await assistantMessages().count();
    const words = "Please answer at length: what should the next step of the project be?";
    await composer().fill(words);
    await composer().press("Enter");
    await page.locator("[data-streaming]").first().waitFor(patient);
    await page.reload();
    // The reloaded page shows the person's message and the answer as it finishes, once.
    await expect.poll(() => assistantMessages().count(), patient).toBe(before + 1);
    await waitUntilReady();
    const answer = (await assistantMessages().last().textContent()) ?? "";
    expect(answer).toContain("You asked:");
    expect(answer).toContain("words");
    expect(await userMessages().last().textContent()).toContain(words);
    expect(await assistantMessages().count()).toBe(before + 1);
  });

  it("should show a sign of work before the first word, mark a reply cut off at the output limit, and Continue it", async () => {
    await waitUntilReady();
    fake.cutNextReply();
    fake.server.setChunkDelayMs(150);
    try {
      await composer().fill("Tell me everything about the release, in one go.");
      await composer().press("Enter");
      await page.locator("[data-nacre-pending]").waitFor(patient);
      await waitUntilReady();
    } finally {
      fake.server.setChunkDelayMs(20);
    }
    expect(await page.locator("[data-nacre-pending]").count()).toBe(0);
    await continueCutOff();
  });

  it("should copy a reply as Markdown from its actions", async () => {
    const reply = assistantMessages().last();
    await reply.hover();
    const copy = reply.locator("[data-nacre-message-copy]");
    await expect
      .poll(() => copy.evaluate((node) => getComputedStyle(node.parentElement as Element).opacity), patient)
      .toBe("1");
    await copy.click();
    await expect.poll(() => copy.getAttribute("data-copied"), patient).toBe("");
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toContain("You asked:");
  });

  it("should create, rename, switch and delete chats in the list, and keep it across a reload", async () => {
    await chatListScenario(page, patient);
  });

  it("should have had no page error, and the key in nothing the page sent or received", async () => {
    await page.waitForTimeout(500);
    expect(pageErrors).toEqual([]);
    expect(traffic.length).toBeGreaterThan(20);
    for (const item of traffic) expect(item).not.toContain(apiKey);
  });
});

describe("pnpm serve's guard", () => {
  it("given a non-loopback --host without NACRE_SERVER_TOKENS, should exit with a clear error", async () => {
    const { code, output } = await serveRefusal({ NACRE_SERVER_TOKENS: "", NACRE_PROVIDER: "fake" }, [
      "--host",
      "0.0.0.0",
      "--port",
      "0",
    ]);
    expect(code).toBe(1);
    expect(output).toMatch(/--host 0\.0\.0\.0 is not this computer's loopback.*NACRE_SERVER_TOKENS/s);
  });
});
