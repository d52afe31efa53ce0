import { createRemoteEngine } from "@conch/engine-client/remote";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExampleInChromium } from "./example-harness.js";
import * as versions from "./versions-replay.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };
const { id: chatId, editedText, nextText } = versions.versionsChat;

/**
 * #34's acceptance in the assistant-ui example, in Chromium: a chat of up to 40 real turns until it has folded
 * twice, its 3rd message edited in assistant-ui's edit composer and answered, that answer regenerated twice (its
 * Reload), every version reached with its BranchPicker, a reload: every version there, the active branch the one
 * chosen, the divider where that branch's memory starts, and each request the fake provider received the one a
 * linear chat of that branch alone is sent (replayed on a second engine over the same provider). Folds happen in
 * the turn that needs them (no fold ahead), so that the chat and its replay fold at the same turns.
 */
describe("examples/assistant-ui-chat: versions (edit, regenerate, the BranchPicker) in Chromium", () => {
  let example: ExampleInChromium;
  let page: Page;

  const rows = (role: "user" | "assistant") => page.locator(`.message[data-role="${role}"]`);
  const divider = () => page.locator("[data-nacre-summary-divider]");
  const countOf = (row: Locator) => row.locator("[data-nacre-branch-count]");
  const chat = async () => (await createRemoteEngine({ baseURL: `${example.url}api/engine` })).loadChat(chatId);

  async function waitUntilReady() {
    await expect.poll(() => page.locator(".thread-header").getAttribute("data-status"), patient).toBe("ready");
  }
  async function send(text: string) {
    await waitUntilReady();
    const before = await rows("user").count();
    await page.getByRole("textbox", { name: "Message" }).fill(text);
    await page.getByRole("button", { name: "Send", exact: true }).last().click();
    await expect.poll(() => rows("user").count(), patient).toBe(before + 1);
    await waitUntilReady();
  }
  /** The divider is in the message where the active branch's memory starts (and only there). */
  async function expectDividerInPlace() {
    const firstKeptSeq = (await chat()).summary?.firstKeptSeq;
    expect(firstKeptSeq).toBeGreaterThan(0);
    await expect.poll(() => divider().count(), patient).toBe(1);
    expect(await page.locator(`[data-message-id="nacre-${firstKeptSeq}"] [data-nacre-summary-divider]`).count()).toBe(
      1,
    );
  }

  beforeAll(async () => {
    example = await versions.startVersionsExample("assistant-ui-chat");
    page = example.page;
  });
  afterAll(() => example?.close());

  it("should edit the 3rd message of a chat folded twice, regenerate twice, move between every version, and keep them across a reload", async () => {
    await page.getByRole("textbox", { name: "Message" }).waitFor(patient);
    // Up to 40 real turns (the recorded ones, again and again), until the chat has folded twice.
    const sent = await versions.foldTwice(example.fake, send);

    // Edit the 3rd message in assistant-ui's edit composer, in place: a branch forking before both folds.
    await versions.editMessage(page, rows("user").nth(2), editedText);
    await expect.poll(() => rows("user").count(), patient).toBe(3);
    await waitUntilReady();
    await expect.poll(() => countOf(rows("user").nth(2)).textContent(), patient).toBe("2 / 2");
    expect(await divider().count()).toBe(0);

    // Regenerate its answer twice: three versions of it.
    await versions.regenerateTwice(() => rows("assistant").last(), countOf, waitUntilReady);
    expect(versions.chatModelBodies(example.fake).slice(sent.length)).toHaveLength(3);

    // Every version with the picker: the answer's three, then the 3rd message's two, and back to the first.
    const answerPicker = () => rows("assistant").last().locator("[data-nacre-branch-picker]");
    for (const shown of ["2 / 3", "1 / 3"]) {
      await answerPicker().getByRole("button", { name: "Previous version" }).click();
      await expect.poll(() => countOf(rows("assistant").last()).textContent(), patient).toBe(shown);
    }
    await answerPicker().getByRole("button", { name: "Next version" }).click();
    await expect.poll(() => countOf(rows("assistant").last()).textContent(), patient).toBe("2 / 3");
    await rows("user").nth(2).getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => rows("user").count(), patient).toBe(sent.length);
    // The engine's active branch follows the picker: the first branch is whole, its divider in its place.
    await expect
      .poll(async () => (await chat()).messages.filter((m) => m.role === "user").length, patient)
      .toBe(sent.length);
    await waitUntilReady();
    await expectDividerInPlace();

    // A reload: the same branch, every version a click away (useNacreRuntime gives assistant-ui every version the
    // engine keeps, not only those this page has seen), the divider in its place.
    await page.reload();
    await waitUntilReady();
    await expect.poll(() => rows("user").count(), patient).toBe(sent.length);
    await expectDividerInPlace();
    await expect.poll(() => countOf(rows("user").nth(2)).textContent(), patient).toBe("1 / 2");
    await rows("user").nth(2).getByRole("button", { name: "Next version" }).click();
    await expect.poll(() => rows("user").count(), patient).toBe(3);
    // A version of a message opens its newest branch (the engine's rule): the answer written last.
    await expect.poll(() => countOf(rows("assistant").last()).textContent(), patient).toBe("3 / 3");
    await rows("user").nth(2).getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => rows("user").count(), patient).toBe(sent.length);
    await waitUntilReady();

    // The next turn on the chosen branch.
    await send(nextText);
    // Each request the provider received is the one a linear chat of that branch alone is sent.
    await versions.expectEachBranchLinear(example.fake, sent);
    expect(example.pageErrors).toEqual([]);
    // Up to 40 turns in Chromium and two replays: minutes on a loaded machine.
  }, 600_000);
});
