import { join } from "node:path";
import { type NacreUIMessage, nacreDivider } from "@conch/engine-client/ai-sdk";
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

const patient = { timeout: 60_000 };

describe("examples/ai-sdk-chat: useChat on the API engine behind nacreChatResponse, in Chromium", () => {
  let example: ExampleInChromium;
  let page: Page;
  const turns = recordedDemoTurns().map((turn) => turn.person);
  let sent = 0;

  const messages = () => page.locator(".message");
  const userMessages = () => page.locator('.message[data-message-role="user"]');
  const dividerLine = () => page.locator("[data-nacre-summary-divider-trigger]");
  const composer = () => page.getByRole("textbox", { name: "Message" });
  const loaded = async (): Promise<NacreUIMessage[]> =>
    ((await (await fetch(`${example.url}api/chat?id=ai-sdk-chat`)).json()) as { messages: NacreUIMessage[] }).messages;
  const logText = async () => (await loaded()).map((message) => `${message.id} ${JSON.stringify(message.parts)}`);

  async function ready(on: Page = page) {
    await on.getByRole("button", { name: "Send", exact: true }).waitFor(patient);
  }

  async function send(text: string, on: Page = page) {
    await ready(on);
    const before = await on.locator('.message[data-message-role="user"]').count();
    await on.getByRole("textbox", { name: "Message" }).fill(text);
    await on.getByRole("textbox", { name: "Message" }).press("Enter");
    await expect.poll(() => on.locator('.message[data-message-role="user"]').count(), patient).toBe(before + 1);
    await ready(on);
  }

  beforeAll(async () => {
    example = await startExampleInChromium("ai-sdk-chat", { chunkDelayMs: 1 });
    page = example.page;
  });
  afterAll(() => example?.close());

  it("should fold within a handful of real turns and put the divider before the first kept message", async () => {
    sent = (await sendUntilFolded(turns, send, async () => (await dividerLine().count()) > 0)).length;
    expect(sent).toBeLessThanOrEqual(6);
    await expect.poll(() => dividerLine().count(), patient).toBe(1);
    // Where the engine's log says the model's memory starts, and where the page drew the line.
    const divider = nacreDivider(await loaded());
    const logIndex = (await loaded()).findIndex((message) => message.id === divider?.beforeMessageId);
    expect(logIndex).toBeGreaterThan(0);
    const pageIndex = await page.evaluate(() => {
      const line = document.querySelector("[data-nacre-summary-divider]");
      const next = line?.nextElementSibling;
      return [...document.querySelectorAll(".message")].indexOf(next as Element);
    });
    expect(pageIndex).toBe(logIndex);

    await dividerLine().click();
    await expect.poll(() => page.locator("[data-nacre-summary-divider-content]").textContent(), patient).not.toBe("");
    expect(await page.locator("[data-nacre-summary-divider-content]").textContent()).toContain(
      (divider?.summary.text ?? "")
        .replace(/<[^>]+>/g, "")
        .trim()
        .split("\n")[0]
        ?.slice(0, 20) ?? "",
    );
    await page.screenshot({ path: join(screenshotDir, "ai-sdk-chat-divider.png") });
  });

  it("should heal one refusal quietly and show its health note, which no message keeps", async () => {
    example.fake.server.refuseNext(1, "openrouter", { models: [firstChatModel] });
    await send(turns[sent] ?? "And what is still open?");
    sent += 1;
    await expect.poll(() => page.getByRole("status").textContent(), patient).toMatch(/refused the request as too long/);
    expect(await page.locator("[data-nacre-turn-problem]").count()).toBe(0);
    expect(JSON.stringify(await loaded())).not.toContain("nacre-health");
  });

  it("should show the too-long card with its next step after two refusals", async () => {
    example.fake.server.refuseNext(2, "openrouter", { models: [firstChatModel] });
    // Kept in the log and answered on the bigger model below: the next turn is the one after it.
    await send(turns[sent] ?? "And what is still open?");
    sent += 1;
    const card = page.locator('[data-nacre-turn-problem][data-kind="too-long"]');
    await card.waitFor(patient);
    // The fake provider lists bigger models: the card's one next step is to switch.
    expect(await card.getAttribute("data-next")).toBe("switch-model");
    expect(await card.getByRole("button").last().isEnabled()).toBe(true);
    await card.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotDir, "ai-sdk-chat-too-long.png") });
  });

  it("should show the same chat, divider and card after a reload, with 0 page errors", async () => {
    const before = await messages().allTextContents();
    await page.reload();
    await ready();
    await expect.poll(() => messages().allTextContents(), patient).toEqual(before);
    expect(await dividerLine().count()).toBe(1);
    expect(await page.locator('[data-nacre-turn-problem][data-kind="too-long"]').count()).toBe(1);
    expect(example.pageErrors).toEqual([]);
  });

  it("should answer again in place on the bigger model, with no second copy of the message", async () => {
    const card = page.locator('[data-nacre-turn-problem][data-kind="too-long"]');
    const users = await userMessages().count();
    await card.getByRole("button").last().click();
    await expect.poll(() => card.count(), patient).toBe(0);
    await ready();
    expect(await userMessages().count()).toBe(users);
    const log = await loaded();
    expect(log.filter((message) => message.role === "user")).toHaveLength(users);
    expect(log.at(-1)?.role).toBe("assistant");
  });

  it("should offer Edit and Regenerate (the API engine keeps versions) but no delete, and refuse a stale second tab without touching the log", async () => {
    // No message can be deleted (the chat list's Delete removes a whole chat); an edit or another answer is a new
    // version beside the old one, which the API engine keeps.
    const chat = page.locator(".chat");
    expect(await chat.getByRole("button", { name: /delete/i }).count()).toBe(0);
    expect(await chat.getByRole("button", { name: "Edit" }).count()).toBeGreaterThan(0);
    expect(await chat.getByRole("button", { name: "Regenerate" }).count()).toBeGreaterThan(0);
    const second = await example.browser.newPage();
    second.on("pageerror", (error) => example.pageErrors.push(String(error)));
    await second.goto(example.url);
    await ready(second);
    await send("One more from the first tab.");
    const log = await logText();

    await second.getByRole("textbox", { name: "Message" }).fill("From the stale tab");
    await second.getByRole("textbox", { name: "Message" }).press("Enter");
    await second.locator(".chat-error").waitFor(patient);
    expect(await second.locator(".chat-error").textContent()).toContain("stale-seq");
    expect(await logText()).toEqual(log);
    await second.close();
    expect(example.pageErrors).toEqual([]);
    expect(await composer().isVisible()).toBe(true);
  });

  /** Sends without waiting for the answer, and waits until some of it is on the page. */
  async function startAnswer(text: string) {
    await ready();
    const answers = await page.locator('.message[data-message-role="assistant"]').count();
    await composer().fill(text);
    await composer().press("Enter");
    await expect
      .poll(async () => {
        const error = page.locator(".chat-error");
        if ((await error.count()) > 0) return `error: ${await error.textContent()}`;
        const all = page.locator('.message[data-message-role="assistant"]');
        return (await all.count()) > answers && ((await all.last().textContent()) ?? "").length > 0;
      }, patient)
      .toBe(true);
  }

  it("should resume an answer after a reload mid-answer, showing the whole answer once", async () => {
    example.fake.server.setChunkDelayMs(150);
    const stops: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (request.url().endsWith("/stop")) stops.push(request.url());
    };
    page.on("request", onRequest);
    try {
      await startAnswer(turns[sent] ?? "Tell me more about it.");
      sent += 1;
      // Mid-answer: the turn still runs on the server as the page goes.
      const running = await fetch(`${example.url}api/chat/ai-sdk-chat/stream`);
      expect(running.status).toBe(200);
      await running.body?.cancel();
      await page.reload();
      // The turn runs on through the reload, and the page reads it to its end.
      await expect
        .poll(async () => (await fetch(`${example.url}api/chat/ai-sdk-chat/stream`)).status, patient)
        .toBe(204);
      await ready();
      const log = await loaded();
      expect(log.at(-1)?.role).toBe("assistant");
      const answer = (log.at(-1)?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
      // The resumed answer is the log's, whole, each part once.
      const lastAnswer = async () =>
        (await page.locator(".message").last().locator(".response").allTextContents()).join("");
      await expect.poll(lastAnswer, patient).toBe(answer);
      const pageTexts = await page.locator(".message").allTextContents();
      expect(pageTexts.filter((text) => text === pageTexts.at(-1))).toHaveLength(1);
      expect(await userMessages().count()).toBe(log.filter((message) => message.role === "user").length);
      // Going away asked nothing to stop: the answer is whole.
      expect(stops).toEqual([]);
      expect(example.pageErrors).toEqual([]);
    } finally {
      page.off("request", onRequest);
      example.fake.server.setChunkDelayMs(1);
    }
  });

  it("should end the server's turn when Stop is pressed, keeping what was written", async () => {
    example.fake.server.setChunkDelayMs(60);
    try {
      await startAnswer("Tell me the whole story again, slowly.");
      const stoppedAt = Date.now();
      await page.getByRole("button", { name: "Stop" }).click();
      // Nothing runs on the server any more: the route has no turn to resume.
      await expect
        .poll(async () => (await fetch(`${example.url}api/chat/ai-sdk-chat/stream`)).status, patient)
        .toBe(204);
      console.info(`stop to the server's turn ended: ${Date.now() - stoppedAt} ms`);
      await ready();
      const log = await loaded();
      expect(log.at(-1)?.role).toBe("assistant");
      await send("And after the stop?");
      expect((await loaded()).at(-1)?.role).toBe("assistant");
      expect(await page.locator(".chat-error").count()).toBe(0);
    } finally {
      example.fake.server.setChunkDelayMs(1);
    }
  });

  it("should fold on /compact typed into the page, sending nothing to the model", async () => {
    const before = await loaded();
    const chatRequests = example.fake.server.chatRequests().length;
    await composer().fill("/compact the decisions");
    await composer().press("Enter");
    await ready();
    await expect.poll(async () => nacreDivider(await loaded())?.summary.reason, patient).toBe("manual");
    const after = await loaded();
    // The log keeps no message for the command, and no chat model was asked (only the summariser).
    expect(after.filter((message) => message.role === "user")).toHaveLength(
      before.filter((message) => message.role === "user").length,
    );
    expect(
      example.fake.server
        .chatRequests()
        .slice(chatRequests)
        .filter((request) => JSON.stringify(request.body).includes("/compact")),
    ).toEqual([]);
    expect(await dividerLine().count()).toBe(1);
    expect(example.pageErrors).toEqual([]);
  });

  const list = () => page.locator(".conversation");
  const chatPage = (): ChatPage => ({ page, list, ready });
  const lastAnswerText = async () =>
    (await page.locator('.message[data-message-role="assistant"]').last().locator(".response").allTextContents()).join(
      "",
    );

  it("should mark an answer cut off at the output limit, and Continue it as a continuation the log keeps", async () => {
    example.fake.cutNextReply();
    await send("Tell me everything about the release, in one go.");
    // The last one (a recorded reply longer than the room the engine asked for is cut off too, as a model's is).
    const cutOff = page.locator(".message").last();
    await expect.poll(() => cutOff.getAttribute("data-nacre-cut-off"), patient).toBe("");
    expect(await cutOff.locator("[data-nacre-message-ending]").textContent()).toBe("Cut off");
    expect((await loaded()).at(-1)?.metadata?.finishReason).toBe("length");
    const next = page.locator("[data-nacre-continue]");
    await next.waitFor(patient);
    await page.screenshot({ path: join(screenshotDir, "ai-sdk-chat-cut-off.png") });
    const users = await userMessages().count();
    await next.click();
    await expect.poll(() => userMessages().count(), patient).toBe(users + 1);
    await ready();
    const log = await loaded();
    const asked = log.at(-2);
    expect(asked?.role).toBe("user");
    expect(asked?.metadata?.continuation).toBe(true);
    expect(log.at(-1)?.metadata?.finishReason).toBe("stop");
    expect(await page.locator("[data-nacre-continue]").count()).toBe(0);
  });

  it("should copy an answer's text from its actions, shown on hover", async () => {
    await checkCopyFromActions(example.browser, example.url, {
      answer: '.message[data-message-role="assistant"]',
      ready,
      expected: async () =>
        ((await loaded()).at(-1)?.parts ?? [])
          .flatMap((part) => (part.type === "text" ? [part.text] : []))
          .join("\n\n"),
      pageErrors: example.pageErrors,
      saysCopied: true,
    });
  });

  it("should follow an answer as it is written, keep the reader's place once they scroll up, and jump back to it", async () => {
    // Slow enough that the answer is still being written through every look below on a loaded machine (a run
    // saw it end before the reader scrolled up); the rest streams at once after the check.
    example.fake.server.setChunkDelayMs(400);
    try {
      await startAnswer(turns[sent] ?? "Tell me the story again, from the start.");
      sent += 1;
      await checkFollowAndJump(chatPage(), lastAnswerText, join(screenshotDir, "ai-sdk-chat-jump-to-latest.png"));
    } finally {
      example.fake.server.setChunkDelayMs(1);
    }
  });

  it("should open at the end, with the same context meter, after a reload", async () => {
    await checkMeterAfterReload(chatPage());
  });

  it("should list the server's chats beside the chat, the open one current, and open a new one", async () => {
    const chats = page.getByRole("navigation", { name: "Chats" });
    const current = chats.locator('[aria-current="page"]');
    const firstTitle = (turns[0] ?? "").trim().split("\n")[0]?.replace(/\s+/g, " ").trim() ?? "";
    await expect
      .poll(() => current.textContent(), patient)
      .toBe(firstTitle.length > 80 ? expect.any(String) : firstTitle);
    await chats.getByRole("button", { name: "New chat", exact: true }).click();
    await expect.poll(() => current.textContent(), patient).toBe("New chat");
    await expect.poll(() => userMessages().count(), patient).toBe(0);
    await send("A second chat, listed by its first words");
    await expect
      .poll(() => chats.locator("[data-nacre-chat-list-title]").first().textContent(), patient)
      .toBe("A second chat, listed by its first words");
    expect(new URL(page.url()).searchParams.get("chat")).toMatch(/^chat-/);
    // Back to the first chat: its messages again.
    await chats.locator("[data-nacre-chat-list-select]").nth(1).click();
    await expect.poll(() => userMessages().count(), patient).toBeGreaterThan(1);
  });

  it("should keep message text readable light and dark (contrast ≥ 4.5:1), with nacre.css's controls", async () => {
    await checkReadableThemes(example.browser, example.url, {
      directory: screenshotDir,
      name: "ai-sdk-chat",
      scroller: ".conversation",
      texts: ".message .response",
      ready,
    });
    expect(example.pageErrors).toEqual([]);
  });
});
