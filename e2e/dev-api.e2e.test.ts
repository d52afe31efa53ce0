import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LastRequest } from "../dev/api/setup.js";
import { chatListScenario } from "./chat-list-steps.js";
import {
  chatSteps,
  launchChromium,
  messageRows,
  recordedDemoTurns,
  screenshotDir,
  startVite,
  wordsOf,
} from "./helpers.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };

/**
 * Drives `pnpm dev` like a person: the chat page on the API engine, talking over real HTTP (through the dev
 * server) to the fake provider, which counts every request with o200k and refuses in real providers' words.
 */
describe("pnpm dev (the API engine and the fake provider) in Chromium", () => {
  let server: Awaited<ReturnType<typeof startVite>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const turns = recordedDemoTurns();
  let pasted = 0;
  const newChatWords = "Paste of the 4,000-line test output: which tests fail?";

  /** A screenshot once two frames have painted (rows with `content-visibility: auto` that just scrolled in). */
  const shot = async (name: string) => {
    await page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))),
    );
    await page.screenshot({ path: join(screenshotDir, `dev-api-${name}.png`) });
  };
  const {
    composer,
    userMessages,
    dividerLine,
    summaryOpened,
    waitUntilReady,
    waitUntilFoldSettled,
    sendAndWait,
    continueCutOff,
  } = chatSteps(() => page, patient);
  const assistantMessages = () => page.locator('[data-nacre-message][data-role="assistant"]');
  const summaryText = () => page.locator("[data-nacre-summary-text]");
  const firstKeptSeq = () => page.locator("[data-nacre-divider-row] + [data-nacre-message]").getAttribute("data-seq");
  const modelSelect = () => page.getByRole("combobox", { name: "Model" });
  const health = () => page.getByRole("region", { name: "Health" });
  const footerStatus = () => page.locator(".demo-footer-status");
  const lastRequest = async (): Promise<LastRequest | null> =>
    (await (await fetch(new URL("/__nacre/last-request", server.url))).json()) as LastRequest | null;

  /** Sets the footer switch and waits until the dev server says it is armed. */
  async function refuseNext(count: 1 | 2, wording: string) {
    const words = page.getByRole("combobox", { name: "in the words of" });
    await words.selectOption({ label: wording });
    await expect.poll(() => words.locator("option:checked").textContent(), patient).toBe(wording);
    // Controlled by what the dev server answers, so clicked rather than checked.
    await page.getByRole("radio", { name: count === 1 ? "Refuse once" : "Refuse twice" }).click();
    await expect.poll(() => footerStatus().textContent(), patient).toContain(`${wording}'s words`);
    await expect
      .poll(() => footerStatus().textContent(), patient)
      .toMatch(count === 1 ? /^The next request is refused/ : /^The next two requests are refused/);
  }

  beforeAll(async () => {
    // NACRE_PROVIDER=fake, whatever the shell says: this test must never reach a real provider.
    server = await startVite("dev/vite.api.config.ts", { NACRE_PROVIDER: "fake" });
    browser = await launchChromium();
    // A fresh context: an empty IndexedDB and localStorage.
    context = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      permissions: ["clipboard-read", "clipboard-write"],
    });
    page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(server.url);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("should open an empty chat on the fake provider's smallest model, with its models and their windows", async () => {
    await waitUntilReady();
    await expect.poll(() => modelSelect().inputValue(), patient).toBe("chat-8k");
    const options = await modelSelect().locator("option").allTextContents();
    // One window per model, the figure the meter shows: never rounded to "8K" here and 8,192 there.
    expect(options).toEqual([
      "Chat 8K (8,192 tokens)",
      "Chat 32K (32,768 tokens)",
      "Chat 200K (200,000 tokens)",
      "Cheap (32,768 tokens)",
    ]);
    await page.getByText("summarises long chats").waitFor();
    expect(await page.locator("[data-nacre-message]").count()).toBe(0);
    await expect.poll(() => footerStatus().textContent(), patient).toBe("The fake provider answers the next request.");
  });

  it("should fold on Chat 8K within a handful of pasted real turns, each answered with its recorded reply", async () => {
    async function pasteNextTurn() {
      const turn = turns[pasted];
      if (!turn) throw new Error(`only ${turns.length} recorded turns`);
      await sendAndWait(turn.person);
      pasted += 1;
      // The fake model answers over HTTP with what the real assistant said (cut to the answer room).
      const recorded = turn.rounds.map((round) => round.reply.trim()).find((reply) => reply !== "");
      const answer = (await assistantMessages().last().textContent()) ?? "";
      // The row is in full (Markdown rendered) or a placeholder (Markdown as typed): compare the words.
      if (recorded) expect(wordsOf(answer)).toContain(wordsOf(recorded.slice(0, 40)));
      else expect(answer).toContain("You asked:");
    }
    while (pasted < turns.length) {
      await pasteNextTurn();
      await waitUntilFoldSettled();
      if ((await dividerLine().count()) > 0) break;
    }
    expect(pasted).toBeLessThanOrEqual(5);
    await expect
      .poll(() => dividerLine().textContent(), patient)
      .toMatch(/^Earlier messages are summarised for Chat 8K/);
    // A fold ahead of the need that took every message shown (the next turn keeps only its own) stands after the
    // last one, where the next goes; that turn is the first whose request carries the summary (read below).
    if ((await page.locator("[data-nacre-divider-row] + [data-nacre-message]").count()) === 0) {
      expect(await page.locator("[data-nacre-divider-row] ~ [data-nacre-message]").count()).toBe(0);
      await pasteNextTurn();
      expect(await firstKeptSeq()).toBe(await userMessages().last().getAttribute("data-seq"));
    }
    // The folded messages are all still in the page.
    expect(await page.locator("[data-nacre-message][data-folded]").count()).toBeGreaterThan(0);
  });

  it("should open the divider to the summary the engine sent, with facts from the folded turns", async () => {
    await dividerLine().click();
    await expect.poll(() => dividerLine().getAttribute("aria-expanded"), patient).toBe("true");
    const summary = (await summaryText().textContent()) ?? "";
    await page.getByText("Written by cheap").waitFor();
    // Facts of the folded turns: what the person asked in each, in their words.
    const folded = await page.locator('[data-nacre-message][data-role="user"][data-folded]').allTextContents();
    expect(folded.length).toBeGreaterThan(0);
    for (const [index] of folded.entries()) {
      const firstLine = (turns[index]?.person ?? "").split("\n")[0]?.trim() ?? "";
      expect(summary).toContain(firstLine.slice(0, 60));
    }
    expect(summary).toMatch(/File mentioned: [\w.-]+\.(?:ts|md|json)/);
    // What the fake provider received with the last answer: this very summary, framed in front of the
    // first kept person's message.
    const sent = await lastRequest();
    expect(sent?.model).toBe("chat-8k");
    // The page shows each line break as a <br>: read the lines back exactly.
    const shown = await summaryText().evaluate((node) =>
      [...node.childNodes].map((child) => (child.nodeName === "BR" ? "\n" : (child.textContent ?? ""))).join(""),
    );
    expect(sent?.summary).toBe(shown);
    await summaryOpened();
    await shot("01-fold-divider-open");
  });

  it("should show the same chat, the same divider and the same summary after a reload", async () => {
    const messagesBefore = await messageRows(page);
    const dividerBefore = await dividerLine().textContent();
    const firstKeptBefore = await firstKeptSeq();
    const summaryBefore = await summaryText().textContent();
    await page.reload();
    await waitUntilReady();
    await expect.poll(() => page.locator("[data-nacre-message]").count(), patient).toBe(messagesBefore.length);
    // The same messages in the same order; a row's text is compared where it is shown the same way (in full, or
    // as its placeholder) before and after, since which rows the view renders in full depends on the view.
    const messagesAfter = await messageRows(page);
    expect(messagesAfter.map(({ seq, role }) => ({ seq, role }))).toEqual(
      messagesBefore.map(({ seq, role }) => ({ seq, role })),
    );
    for (const [index, after] of messagesAfter.entries()) {
      const before = messagesBefore[index] ?? after;
      if (before.placeholder === after.placeholder) expect(after.text).toBe(before.text);
      else {
        const [full, plain] = before.placeholder ? [after, before] : [before, after];
        expect(wordsOf(full.text)).toContain(wordsOf(plain.text).slice(0, 30));
      }
    }
    expect(await dividerLine().textContent()).toBe(dividerBefore);
    expect(await firstKeptSeq()).toBe(firstKeptBefore);
    await dividerLine().click();
    await expect.poll(() => summaryText().textContent(), patient).toBe(summaryBefore);
    await summaryOpened();
    await shot("02-after-reload");
    await dividerLine().click();
  });

  it("should fold now with the ⌘K action and with /compact [what to keep], on the real engine", async () => {
    await sendAndWait(turns[pasted]?.person ?? "And what is still open?");
    pasted += 1;
    const before = Number(await firstKeptSeq());
    await page.keyboard.press("Control+k");
    const dialog = page.getByRole("dialog", { name: "Command menu" });
    await dialog.waitFor();
    const action = dialog.getByRole("option", { name: /Summarise the start of this chat/ });
    await expect.poll(() => action.getAttribute("aria-disabled"), patient).toBe("false");
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "detached" });
    await expect.poll(async () => Number(await firstKeptSeq()), patient).toBeGreaterThan(before);
    expect(await firstKeptSeq()).toBe(await userMessages().last().getAttribute("data-seq"));

    await sendAndWait("Which prompt library did we pick for the init command?");
    await composer().fill("/compact the prompt library and the init command");
    await composer().press("Enter");
    await page.getByText("The start of this chat is summarised.").waitFor(patient);
    await dividerLine().click();
    await expect
      .poll(() => summaryText().textContent(), patient)
      .toMatch(/^Kept as asked: the prompt library and the init command/);
    await summaryOpened();
    await dividerLine().scrollIntoViewIfNeeded();
    await shot("03-compact-with-focus");
    await dividerLine().click();
  });

  it("should answer after one refusal for length, with a quiet retry noted in Health", async () => {
    await refuseNext(1, "Anthropic");
    const question = "What is still open in the task spec for init?";
    await sendAndWait(question);
    await expect.poll(() => assistantMessages().last().textContent(), patient).toContain(`You asked: “${question}”`);
    await health().getByText("Quiet retry").waitFor();
    await health()
      .getByText(
        "Chat 8K refused the request as too long (its window is 8192 tokens); it was shortened and sent again.",
      )
      .waitFor();
    expect(await page.locator("[data-nacre-turn-problem]").count()).toBe(0);
    await expect.poll(() => footerStatus().textContent(), patient).toBe("The fake provider answers the next request.");
    // The retry folded everything but this turn: the line sits right above the question.
    expect(await firstKeptSeq()).toBe(await userMessages().last().getAttribute("data-seq"));
    // The whole picture: the line, the answer, the note in Health, the meter.
    await assistantMessages().last().scrollIntoViewIfNeeded();
    await shot("04-healed-quiet-retry");
  });

  it("should show the too-long card after two refusals, and switch to the bigger model that answers", async () => {
    await refuseNext(2, "OpenAI");
    const words = "Here is the whole build log of the init command, what failed?";
    await sendAndWait(words);
    const card = page.locator("[data-nacre-turn-problem]");
    await card.waitFor();
    expect(await card.getAttribute("data-kind")).toBe("too-long");
    await card.getByRole("button", { name: "What the provider said" }).click();
    await card.getByText(/maximum context length is 8192 tokens/).waitFor();
    expect(await card.locator("[data-nacre-turn-problem-action]").count()).toBe(1);
    const next = card.getByRole("button", { name: "Switch to Chat 200K, which reads 24× more" });
    await next.scrollIntoViewIfNeeded();
    await shot("05-too-long-card");
    await next.click();
    await expect.poll(() => modelSelect().inputValue(), patient).toBe("chat-200k");
    // The message went again, to the bigger model, and was answered there.
    await expect.poll(() => assistantMessages().last().textContent(), patient).toContain(`You asked: “${words}”`);
    await waitUntilReady();
    expect((await lastRequest())?.model).toBe("chat-200k");
    await expect
      .poll(() => dividerLine().textContent(), patient)
      .toMatch(/^Earlier messages are summarised for Chat 200K/);
    await shot("06-switched-to-chat-200k");
  });

  it("should offer a new chat with the message in its box when no model reads more", async () => {
    await refuseNext(2, "OpenRouter");
    const words = newChatWords;
    await sendAndWait(words);
    const card = page.locator("[data-nacre-turn-problem]");
    await card.waitFor();
    const next = card.getByRole("button", { name: "Start a new chat with this message" });
    await next.scrollIntoViewIfNeeded();
    await shot("07-too-long-card-new-chat");
    await next.click();
    await expect.poll(() => composer().inputValue(), patient).toBe(words);
    const chats = page.getByRole("navigation", { name: "Chats" });
    // Listed at once as a new chat; it takes its title from its first message once sent.
    await expect.poll(() => chats.locator('[aria-current="page"]').textContent(), patient).toBe("New chat");
    await expect.poll(() => page.locator("[data-nacre-message]").count(), patient).toBe(0);
    await shot("08-new-chat-with-the-message");
    await composer().press("Enter");
    await expect.poll(() => userMessages().count(), patient).toBe(1);
    await waitUntilReady();
    await expect.poll(() => assistantMessages().last().textContent(), patient).toContain(`You asked: “${words}”`);
    await expect.poll(() => chats.locator('[aria-current="page"]').textContent(), patient).toBe(words);
  });

  it("should keep both chats across a reload", async () => {
    await page.reload();
    await waitUntilReady();
    const chats = page.getByRole("navigation", { name: "Chats" });
    const firstTitle = (turns[0]?.person ?? "").trim().split("\n")[0]?.replace(/\s+/g, " ").trim() ?? "";
    const titles = () => chats.locator("[data-nacre-chat-list-title]").allTextContents();
    await expect
      .poll(titles, patient)
      .toEqual([newChatWords, firstTitle.length > 80 ? expect.any(String) : firstTitle]);
    await expect.poll(() => userMessages().count(), patient).toBe(1);
    await chats.locator("[data-nacre-chat-list-select]").nth(1).click();
    await expect
      .poll(() => dividerLine().textContent(), patient)
      .toMatch(/^Earlier messages are summarised for Chat 200K/);
  });

  it("should show a sign of work, mark a reply cut off at the output limit with Continue, and copy a reply", async () => {
    await waitUntilReady();
    const cut = await fetch(new URL("/__nacre/cut-next", server.url), { method: "POST" });
    expect(cut.status).toBe(200);
    const seen = page.evaluate(
      () =>
        new Promise<boolean>((resolve) => {
          const observer = new MutationObserver(() => {
            if (document.querySelector("[data-nacre-pending]")) {
              observer.disconnect();
              resolve(true);
            }
          });
          observer.observe(document.body, { childList: true, subtree: true });
        }),
    );
    await sendAndWait("Tell me everything about the release, in one go.");
    expect(await seen).toBe(true);
    await continueCutOff();
    await shot("cut-off-continued");

    const reply = assistantMessages().last();
    await reply.hover();
    await reply.locator("[data-nacre-message-copy]").click();
    await expect.poll(() => reply.locator("[data-nacre-message-copy]").getAttribute("data-copied"), patient).toBe("");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain("You asked: “Continue”");
  });

  it("should create, rename, switch and delete chats in the list, and keep it across a reload", async () => {
    await chatListScenario(page, patient);
  });

  it("should meet no page error on the way", () => {
    expect(pageErrors).toEqual([]);
  });
});
