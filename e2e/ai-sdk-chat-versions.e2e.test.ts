import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider } from "@conch/engine-client";
import { type NacreUIMessage, nacreDivider } from "@conch/engine-client/ai-sdk";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DemoFakeProvider,
  firstChatModel,
  loadSharedConversations,
  startDemoFakeProvider,
  summariserModel,
} from "../dev/api/fake-provider.js";
import { conversationsDir } from "../dev/transcript-plugin.js";
import { type AiSdkChatServer, createAiSdkChatServer } from "../examples/ai-sdk-chat/server.js";
import { launchChromium, recordedDemoTurns, repoRoot } from "./helpers.js";
import { chatModelBodies, linearChatRequests } from "./versions-replay.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };
const chatId = "versions";
const editedText = "An edited third message: start from the tests instead.";
const nextText = "And what is left to do?";

/**
 * #34's acceptance in the AI SDK example, in Chromium: a chat of up to 40 real turns until it has folded twice,
 * its 3rd message edited and answered, that answer regenerated twice, every version reached with the picker, a
 * reload: every version there, the active branch the one chosen, the divider where that branch's memory starts,
 * and each request the fake provider received the one a linear chat of that branch alone is sent (replayed on a
 * second engine over the same provider). Folds happen in the turn that needs them (no fold ahead), so that the
 * chat and its replay fold at the same turns.
 */
describe("examples/ai-sdk-chat: versions (edit, regenerate, the picker) in Chromium", () => {
  let fake: DemoFakeProvider;
  let example: AiSdkChatServer;
  let folder: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const turns = recordedDemoTurns().map((turn) => turn.person);

  const users = () => page.locator('.message[data-message-role="user"]');
  const answers = () => page.locator('.message[data-message-role="assistant"]');
  const dividerLine = () => page.locator("[data-nacre-summary-divider-trigger]");
  const countOf = (row: ReturnType<Page["locator"]>) => row.locator("[data-nacre-branch-count] [aria-hidden]");
  const loaded = async (): Promise<NacreUIMessage[]> =>
    ((await (await fetch(`${url}api/chat?id=${chatId}`)).json()) as { messages: NacreUIMessage[] }).messages;
  const chatBodies = () => chatModelBodies(fake);

  async function ready() {
    const sendButton = page.locator("[data-nacre-composer-submit]");
    await expect
      .poll(async () => (await sendButton.textContent()) === "Send" && (await sendButton.isEnabled()), patient)
      .toBe(true);
    await expect.poll(() => page.locator("[data-nacre-pending]").count(), patient).toBe(0);
  }

  async function send(text: string) {
    await ready();
    const before = await users().count();
    await page.getByRole("textbox", { name: "Message" }).fill(text);
    await page.getByRole("textbox", { name: "Message" }).press("Enter");
    await expect.poll(() => users().count(), patient).toBe(before + 1);
    await ready();
  }

  /** Where the page drew the divider (the index of the message after it), and where the log says memory starts. */
  async function dividerPlaces(): Promise<[number, number]> {
    const log = await loaded();
    const divider = nacreDivider(log);
    const logIndex = log.findIndex((message) => message.id === divider?.beforeMessageId);
    const pageIndex = await page.evaluate(() => {
      const line = document.querySelector("[data-nacre-summary-divider]");
      return [...document.querySelectorAll(".message")].indexOf(line?.nextElementSibling as Element);
    });
    return [pageIndex, logIndex];
  }

  beforeAll(async () => {
    fake = await startDemoFakeProvider({
      dialect: "openrouter",
      conversations: loadSharedConversations(conversationsDir(repoRoot)),
      chunkDelayMs: 1,
    });
    folder = await mkdtemp(join(tmpdir(), "ai-sdk-chat-versions-"));
    example = await createAiSdkChatServer({
      provider: createProvider("openrouter", {
        baseURL: fake.server.baseURL,
        local: false,
        cheapestModel: summariserModel,
      }),
      model: firstChatModel,
      dataDir: folder,
      foldAhead: false,
    });
    await new Promise<void>((resolve) => example.server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(example.server.address() as AddressInfo).port}/`;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 860 } });
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${url}?chat=${chatId}`);
  });
  afterAll(async () => {
    await browser?.close();
    await example?.close();
    await fake?.server.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("should edit the 3rd message of a chat folded twice, regenerate twice, move between every version, and keep them across a reload", async () => {
    // Up to 40 real turns (the recorded ones, again and again), until the chat has folded twice.
    const sent: string[] = [];
    const summaries: string[] = [];
    for (let index = 0; index < 40; index++) {
      const turn = turns[index % turns.length] ?? "";
      await send(turn);
      sent.push(turn);
      const summary = fake.lastRequest()?.summary ?? null;
      if (summary !== null && summary !== summaries.at(-1)) summaries.push(summary);
      if (summaries.length >= 2) break;
    }
    expect(summaries.length).toBeGreaterThanOrEqual(2);
    const firstBranch = chatBodies();
    expect(firstBranch).toHaveLength(sent.length);

    // Edit the 3rd message in place: a branch forking before both folds.
    const third = users().nth(2);
    await third.scrollIntoViewIfNeeded();
    await third.hover();
    await third.getByRole("button", { name: "Edit" }).click();
    const editor = page.locator("[data-nacre-message-editor]");
    await editor.getByRole("textbox", { name: "Edit message" }).fill(editedText);
    await editor.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => users().count(), patient).toBe(3);
    await ready();
    await expect.poll(() => countOf(users().nth(2)).textContent(), patient).toBe("2 / 2");
    expect(await dividerLine().count()).toBe(0);

    // Regenerate its answer twice: three versions of it.
    for (const count of [2, 3]) {
      const answer = answers().last();
      await answer.hover();
      await answer.getByRole("button", { name: "Regenerate" }).click();
      await expect.poll(() => countOf(answers().last()).textContent(), patient).toBe(`${count} / ${count}`);
      await ready();
    }
    const onEditedBranch = chatBodies().slice(firstBranch.length);
    expect(onEditedBranch).toHaveLength(3);

    // Every version with the picker: the answer's three, then the 3rd message's two, and back to the first.
    const answerPicker = () => answers().last().getByRole("group", { name: "Versions" });
    for (const shown of ["2 / 3", "1 / 3"]) {
      await answerPicker().getByRole("button", { name: "Previous version" }).click();
      await expect.poll(() => countOf(answers().last()).textContent(), patient).toBe(shown);
    }
    await answerPicker().getByRole("button", { name: "Next version" }).click();
    await expect.poll(() => countOf(answers().last()).textContent(), patient).toBe("2 / 3");
    await users().nth(2).getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => users().count(), patient).toBe(sent.length);
    expect(await countOf(users().nth(2)).textContent()).toBe("1 / 2");
    await users().nth(2).getByRole("button", { name: "Next version" }).click();
    await expect.poll(() => users().count(), patient).toBe(3);
    // A version of a message opens its newest branch (the engine's rule): the answer written last.
    await expect.poll(() => countOf(answers().last()).textContent(), patient).toBe("3 / 3");
    await users().nth(2).getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => users().count(), patient).toBe(sent.length);
    // The first branch is whole, its divider back where its memory starts.
    await expect.poll(() => dividerLine().count(), patient).toBe(1);
    const [pageIndex, logIndex] = await dividerPlaces();
    expect(logIndex).toBeGreaterThan(0);
    expect(pageIndex).toBe(logIndex);

    // A reload: the same branch, every version a click away, the divider in its place.
    await page.reload();
    await ready();
    await expect.poll(() => users().count(), patient).toBe(sent.length);
    await expect.poll(() => countOf(users().nth(2)).textContent(), patient).toBe("1 / 2");
    expect(await dividerLine().count()).toBe(1);
    expect(await dividerPlaces()).toEqual([logIndex, logIndex]);
    await users().nth(2).getByRole("button", { name: "Next version" }).click();
    await expect.poll(() => users().count(), patient).toBe(3);
    await expect.poll(() => countOf(answers().last()).textContent(), patient).toBe("3 / 3");
    await users().nth(2).getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => users().count(), patient).toBe(sent.length);

    // The next turn on the chosen branch.
    await send(nextText);
    const afterReload = chatBodies().slice(firstBranch.length + onEditedBranch.length);
    expect(afterReload).toHaveLength(1);

    // Each request the provider received is the one a linear chat of that branch alone is sent.
    const linearEdited = await linearChatRequests(fake, [...sent.slice(0, 2), editedText]);
    expect(onEditedBranch).toEqual([linearEdited[2], linearEdited[2], linearEdited[2]]);
    const linearFirst = await linearChatRequests(fake, [...sent, nextText]);
    expect([...firstBranch, ...afterReload]).toEqual(linearFirst);
    expect(pageErrors).toEqual([]);
    // Up to 40 turns in Chromium and two replays: minutes on a loaded machine.
  }, 600_000);
});
