import { join } from "node:path";
import { createRemoteEngine } from "@conch/engine-client/remote";
import { tooLongBodyFor } from "@conch/fake-provider";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstChatModel } from "../dev/api/fake-provider.js";
import {
  type ChatPage,
  checkCopyFromActions,
  checkFollowAndJump,
  checkMeterAfterReload,
  checkReadableThemes,
} from "./chat-ui-checks.js";
import { type ExampleInChromium, sendUntilFolded, startExampleInChromium } from "./example-harness.js";
import { recordedDemoTurns, screenshotDir } from "./helpers.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };

/**
 * examples/assistant-ui-chat as a person uses it: assistant-ui's thread primitives on `useNacreRuntime`, the
 * engine on the example's Node server, over real HTTP to the fake provider, in Chromium.
 */
describe("examples/assistant-ui-chat in Chromium", () => {
  let example: ExampleInChromium;
  let page: Page;
  const turns = recordedDemoTurns();

  const composer = () => page.getByRole("textbox", { name: "Message" });
  const rows = (role: "user" | "assistant") => page.locator(`.message[data-role="${role}"]`);
  const divider = () => page.locator("[data-nacre-summary-divider]");
  const chat = async () =>
    (await createRemoteEngine({ baseURL: `${example.url}api/engine` })).loadChat("assistant-ui-example");

  async function waitUntilReady(target = page) {
    await expect.poll(() => target.locator(".thread-header").getAttribute("data-status"), patient).toBe("ready");
  }
  /** Sends and waits until the turn is over; `added`: the person's messages the thread gains (a stale tab reads others'). */
  async function send(text: string, target = page, added = 1) {
    await waitUntilReady(target);
    const before = await target.locator('.message[data-role="user"]').count();
    await target.getByRole("textbox", { name: "Message" }).fill(text);
    await target.getByRole("button", { name: "Send", exact: true }).click();
    await expect.poll(() => target.locator('.message[data-role="user"]').count(), patient).toBe(before + added);
    await waitUntilReady(target);
  }

  beforeAll(async () => {
    example = await startExampleInChromium("assistant-ui-chat");
    page = example.page;
  });
  afterAll(() => example?.close());

  it("should fold on Chat 8K within a handful of real turns, the divider before the first kept message", async () => {
    await composer().waitFor(patient);
    const sent = await sendUntilFolded(
      turns,
      async (turn) => {
        await send(turn.person);
        // Each answer is the recorded one.
        const recorded = turn.rounds.map((round) => round.reply.trim()).find((reply) => reply !== "");
        const answer = (await rows("assistant").last().textContent()) ?? "";
        if (recorded) expect(answer).toContain(recorded.slice(0, 40));
      },
      async () => (await divider().count()) > 0,
    );
    expect(sent.length).toBeLessThanOrEqual(6);
    const snapshot = await chat();
    const firstKeptSeq = snapshot.summary?.firstKeptSeq;
    expect(firstKeptSeq).toBeGreaterThan(0);
    // One divider, in the message where the model's word-for-word memory starts.
    await expect.poll(() => divider().count(), patient).toBe(1);
    expect(await page.locator(`[data-message-id="nacre-${firstKeptSeq}"] [data-nacre-summary-divider]`).count()).toBe(
      1,
    );
    // Every message of the log is still in the thread, folded ones too.
    expect(await page.locator(".message").count()).toBe(snapshot.messages.filter((m) => m.role !== "tool").length);
  });

  it("should open the divider to the summary the engine wrote", async () => {
    await page.locator("[data-nacre-summary-divider-trigger]").click();
    const summary = (await chat()).summary?.text ?? "";
    expect(summary).not.toBe("");
    const shown = page.locator("[data-nacre-summary-text]");
    await shown.waitFor(patient);
    // The page shows each line break as a <br>: read the lines back exactly.
    const lines = await shown.evaluate((node) =>
      [...node.childNodes].map((child) => (child.nodeName === "BR" ? "\n" : (child.textContent ?? ""))).join(""),
    );
    expect(lines).toBe(summary);
    await page.screenshot({ path: join(screenshotDir, "assistant-ui-chat-01-divider-open.png") });
  });

  it("should show the too-long card under the person's message after two refusals, with its one next step", async () => {
    const body = tooLongBodyFor("openai", { window: 8_192, inputTokens: 8_704 + 512, outputTokens: 0 });
    example.fake.server.refuseNext(2, body ?? "openai", { models: [firstChatModel] });
    const words = "Here is the whole build log of the init command, what failed?";
    await send(words);
    const card = page.locator("[data-nacre-turn-problem]");
    await card.waitFor(patient);
    // The card settles under the person's message as the thread re-renders: wait for it there, never for time.
    await expect.poll(() => card.getAttribute("data-kind"), patient).toBe("too-long");
    await expect
      .poll(
        () => page.locator('.message[data-role="user"]').last().locator("[data-nacre-turn-problem]").count(),
        patient,
      )
      .toBe(1);
    const actions = card.locator("[data-nacre-turn-problem-action]");
    await expect.poll(() => actions.count(), patient).toBe(1);
    await expect.poll(() => actions.textContent(), patient).toMatch(/^Switch to Chat 200K/);
    await page.screenshot({ path: join(screenshotDir, "assistant-ui-chat-02-too-long-card.png") });
    // The next step: the same message, answered in place on the bigger model (not added twice).
    const before = (await chat()).messages.length;
    await actions.click();
    await expect.poll(() => page.locator("[data-nacre-turn-problem]").count(), patient).toBe(0);
    await expect.poll(async () => (await rows("assistant").last().textContent()) ?? "", patient).toContain(words);
    await waitUntilReady();
    // The answer is saved as the turn ends: wait for the server's log to hold it (one message more, not two).
    await expect.poll(async () => (await chat()).messages.length, patient).toBe(before + 1);
  });

  it("should offer Edit and Regenerate, as new versions beside the old ones (the API engine keeps versions)", async () => {
    expect(await page.getByRole("button", { name: "Edit" }).and(page.locator(":enabled")).count()).toBeGreaterThan(0);
    expect(
      await page.getByRole("button", { name: "Regenerate" }).and(page.locator(":enabled")).count(),
    ).toBeGreaterThan(0);
  });

  it("should keep a version shown, its picker busy, until the one chosen has arrived: never a blank message", async () => {
    // A chat of its own, in a tab of its own: the other tests' chat stays linear.
    const tab = await page.context().browser()?.newPage();
    if (!tab) throw new Error("The page's browser has closed.");
    const address = new URL(page.url());
    address.searchParams.set("chat", "version-on-its-way");
    await tab.goto(address.href);
    await send("Which version is shown?", tab);
    const answer = tab.locator('.message[data-role="assistant"]').last();
    const picker = answer.locator("[data-nacre-branch-picker]");
    await answer.hover();
    await answer.getByRole("button", { name: "Regenerate" }).click();
    await expect.poll(() => picker.locator("[data-nacre-branch-count]").textContent(), patient).toBe("2 / 2");
    await waitUntilReady(tab);

    // The engine's answer to the switch held (a slow network); every message's words watched meanwhile.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await tab.route("**/branch?**", async (route) => {
      await released;
      await route.continue();
    });
    await tab.evaluate(() => {
      const blank: string[] = [];
      Object.assign(window, { blank });
      new MutationObserver(() => {
        for (const body of document.querySelectorAll(".message-body")) {
          if ((body.textContent ?? "").trim() === "") blank.push(body.closest(".message")?.outerHTML ?? "");
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await picker.getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => picker.getAttribute("aria-busy"), patient).toBe("true");
    expect(await picker.locator("[data-nacre-branch-count]").textContent()).toBe("2 / 2");
    release();
    await expect.poll(() => picker.locator("[data-nacre-branch-count]").textContent(), patient).toBe("1 / 2");
    await expect.poll(() => picker.getAttribute("aria-busy"), patient).toBe("false");
    // The chosen version with its words, as the engine keeps them.
    const engine = await createRemoteEngine({ baseURL: new URL("/api/engine", address).href });
    const chosen = (await engine.loadChat("version-on-its-way")).messages.at(-1);
    const words = chosen?.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("") ?? "";
    expect(words).not.toBe("");
    // Compared without white space: the page shows the words as paragraphs.
    const bare = (text: string | null) => (text ?? "").replace(/\s+/g, "");
    await expect.poll(async () => bare(await answer.locator(".message-body").textContent()), patient).toBe(bare(words));
    expect(await tab.evaluate(() => (window as unknown as { blank: string[] }).blank)).toEqual([]);
    await tab.close();
  });

  it("should show the same chat after a reload, and a second tab never corrupts the log", async () => {
    const before = await page.locator(".message").allInnerTexts();
    const firstKeptSeq = (await chat()).summary?.firstKeptSeq;
    await page.reload();
    await waitUntilReady();
    await expect.poll(() => page.locator(".message").count(), patient).toBe(before.length);
    expect(await page.locator(".message").allInnerTexts()).toEqual(before);
    expect(await page.locator(`[data-message-id="nacre-${firstKeptSeq}"] [data-nacre-summary-divider]`).count()).toBe(
      1,
    );

    const second = await example.browser.newPage();
    second.on("pageerror", (error) => example.pageErrors.push(String(error)));
    await second.goto(example.url);
    await send("A question from the second tab.", second);
    // The first tab has not read the new turn yet: its send is refused as stale, it reads the log again and
    // sends after the second tab's turn, so it shows both; nothing is overwritten or reordered.
    await send("And one from the first tab.", page, 2);
    await expect
      .poll(async () => (await rows("user").last().textContent()) ?? "", patient)
      .toContain("And one from the first tab.");
    const log = (await chat()).messages;
    expect(log.map((message) => message.seq)).toEqual(log.map((_, index) => index));
    const people = log.filter((message) => message.role === "user").map((message) => JSON.stringify(message.parts));
    expect(people.filter((parts) => parts.includes("second tab"))).toHaveLength(1);
    expect(people.filter((parts) => parts.includes("first tab"))).toHaveLength(1);
    await second.close();
    expect(example.pageErrors).toEqual([]);
  });

  const list = () => page.locator(".thread-viewport");
  const chatPage = (): ChatPage => ({ page, list, ready: waitUntilReady });
  const lastAnswerText = async () => (await rows("assistant").last().locator(".message-body").textContent()) ?? "";

  it("should mark a reply cut off at the output limit, and Continue it as a continuation the log keeps", async () => {
    example.fake.cutNextReply();
    await send("Tell me everything about the release, in one go.");
    const answer = rows("assistant").last();
    await expect.poll(() => answer.locator("[data-nacre-message-ending]").textContent(), patient).toBe("Cut off");
    expect((await chat()).messages.at(-1)?.finishReason).toBe("length");
    const next = page.locator("[data-nacre-continue]");
    await next.waitFor(patient);
    await page.screenshot({ path: join(screenshotDir, "assistant-ui-chat-03-cut-off.png") });
    const users = await rows("user").count();
    await next.click();
    await expect.poll(() => rows("user").count(), patient).toBe(users + 1);
    await waitUntilReady();
    const log = (await chat()).messages;
    expect(log.at(-2)).toMatchObject({ role: "user", continuation: true });
    expect(log.at(-1)?.finishReason).toBe("stop");
    expect(await page.locator("[data-nacre-continue]").count()).toBe(0);
  });

  it("should show a sign of work before the first word, then follow the reply, keep the reader's place and jump back", async () => {
    // Slow enough that the answer is still being written through every look below on a loaded machine (a run
    // saw it end before the reader scrolled up); the rest streams at once after the check.
    example.fake.server.setChunkDelayMs(400);
    try {
      await waitUntilReady();
      const answers = await rows("assistant").count();
      await composer().fill(turns[0]?.person ?? "Tell me the story again, from the start.");
      await page.getByRole("button", { name: "Send", exact: true }).click();
      await page.locator("[data-nacre-pending]").waitFor(patient);
      await expect.poll(() => rows("assistant").count(), patient).toBe(answers + 1);
      await checkFollowAndJump(
        chatPage(),
        lastAnswerText,
        join(screenshotDir, "assistant-ui-chat-04-jump-to-latest.png"),
      );
      // The sign of work went with the reply's first word.
      expect(await page.locator("[data-nacre-pending]").count()).toBe(0);
    } finally {
      example.fake.server.setChunkDelayMs(1);
    }
  });

  it("should copy a reply's text from its actions, shown on hover", async () => {
    await checkCopyFromActions(example.browser, example.url, {
      answer: '.message[data-role="assistant"]',
      ready: waitUntilReady,
      expected: async () =>
        ((await chat()).messages.at(-1)?.parts ?? [])
          .flatMap((part) => (part.type === "text" ? [part.text] : []))
          .join("\n\n"),
      pageErrors: example.pageErrors,
      saysCopied: false,
    });
  });

  it("should open at the end, with the same context meter, after a reload", async () => {
    await checkMeterAfterReload(chatPage());
  });

  it("should keep message text readable light and dark (contrast ≥ 4.5:1), with nacre.css's controls", async () => {
    await checkReadableThemes(example.browser, example.url, {
      directory: screenshotDir,
      name: "assistant-ui-chat",
      scroller: ".thread-viewport",
      texts: ".message-body p",
      ready: waitUntilReady,
    });
    expect(example.pageErrors).toEqual([]);
  });
});
