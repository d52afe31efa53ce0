import { type NacreUIMessage, nacreDivider } from "@conch/engine-client/ai-sdk";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExampleInChromium } from "./example-harness.js";
import * as versions from "./versions-replay.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };
const { id: chatId, editedText, nextText } = versions.versionsChat;

/**
 * #34's acceptance in the AI SDK example, in Chromium: a chat of up to 40 real turns until it has folded twice,
 * its 3rd message edited and answered, that answer regenerated twice, every version reached with the picker, a
 * reload: every version there, the active branch the one chosen, the divider where that branch's memory starts,
 * and each request the fake provider received the one a linear chat of that branch alone is sent (replayed on a
 * second engine over the same provider). Folds happen in the turn that needs them (no fold ahead), so that the
 * chat and its replay fold at the same turns.
 */
describe("examples/ai-sdk-chat: versions (edit, regenerate, the picker) in Chromium", () => {
  let example: ExampleInChromium;
  let page: Page;

  const users = () => page.locator('.message[data-message-role="user"]');
  const answers = () => page.locator('.message[data-message-role="assistant"]');
  const dividerLine = () => page.locator("[data-nacre-summary-divider-trigger]");
  const countOf = (row: ReturnType<Page["locator"]>) => row.locator("[data-nacre-branch-count] [aria-hidden]");
  const loaded = async (): Promise<NacreUIMessage[]> =>
    ((await (await fetch(`${example.url}api/chat?id=${chatId}`)).json()) as { messages: NacreUIMessage[] }).messages;

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
    example = await versions.startVersionsExample("ai-sdk-chat");
    page = example.page;
  });
  afterAll(() => example?.close());

  it("should edit the 3rd message of a chat folded twice, regenerate twice, move between every version, and keep them across a reload", async () => {
    // Up to 40 real turns (the recorded ones, again and again), until the chat has folded twice.
    const sent = await versions.foldTwice(example.fake, send);

    // Edit the 3rd message in place: a branch forking before both folds.
    await versions.editMessage(page, users().nth(2), editedText);
    await expect.poll(() => users().count(), patient).toBe(3);
    await ready();
    await expect.poll(() => countOf(users().nth(2)).textContent(), patient).toBe("2 / 2");
    expect(await dividerLine().count()).toBe(0);

    // Regenerate its answer twice: three versions of it.
    await versions.regenerateTwice(() => answers().last(), countOf, ready);
    expect(versions.chatModelBodies(example.fake).slice(sent.length)).toHaveLength(3);

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
    // Each request the provider received is the one a linear chat of that branch alone is sent.
    await versions.expectEachBranchLinear(example.fake, sent);
    expect(example.pageErrors).toEqual([]);
    // Up to 40 turns in Chromium and two replays: minutes on a loaded machine.
  }, 600_000);
});
