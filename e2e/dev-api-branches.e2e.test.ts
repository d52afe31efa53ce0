import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LastRequest } from "../dev/api/setup.js";
import { chatSteps, launchChromium, recordedDemoTurns, startVite } from "./helpers.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };

/**
 * #34's acceptance on `pnpm dev` (the API engine over the fake provider, real HTTP): a long chat that has folded
 * twice, its 3rd message edited and answered, that answer regenerated twice, every version reached with the
 * picker, a reload: every version there, the active branch the one chosen, the divider where that branch's
 * memory starts, and the provider sent that branch alone. It needs the API engine's `branches` (#33).
 *
 * "That branch alone" is measured, not guessed: the same branch is first played as a chat of its own (its first two
 * turns, then the edited words), and the provider's record of its last request is what the edit must be sent. In
 * this recorded chat the first turn is long, so the first fold (of the first turn) lies before the edited message:
 * the branch shares that fold, and reads its own history after it, without the later fold's summary.
 */
describe("versions on pnpm dev (the API engine) in Chromium: a chat folded twice", () => {
  let server: Awaited<ReturnType<typeof startVite>>;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const turns = recordedDemoTurns();
  const { waitUntilReady, sendAndWait } = chatSteps(() => page, patient);
  const users = () => page.locator('[data-nacre-message][data-role="user"]');
  const answers = () => page.locator('[data-nacre-message][data-role="assistant"]');
  const lastRequest = async (): Promise<LastRequest | null> =>
    (await (await fetch(new URL("/__nacre/last-request", server.url))).json()) as LastRequest | null;
  /** How many folds the chat has had: the divider's summary changes with each. */
  const summaries: string[] = [];

  beforeAll(async () => {
    server = await startVite("dev/vite.api.config.ts", { NACRE_PROVIDER: "fake" });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${server.url}?theme=light`);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("should edit the 3rd message of a chat folded twice, regenerate twice, and keep every version", async () => {
    const editedWords = "An edited third message: start from the tests instead.";
    await waitUntilReady();
    // The edited branch as a linear chat of its own: what the provider must be sent for the edit.
    for (const words of [turns[0]?.person ?? "", turns[1]?.person ?? "", editedWords]) await sendAndWait(words);
    const linear = await lastRequest();
    expect(linear).not.toBeNull();
    await page
      .getByRole("navigation", { name: "Chats" })
      .getByRole("button", { name: "New chat", exact: true })
      .click();
    await expect.poll(() => page.locator("[data-nacre-message]").count(), patient).toBe(0);
    // Up to 40 real turns, until the chat has folded twice.
    for (const turn of turns.slice(0, 40)) {
      await sendAndWait(turn.person);
      const summary = (await lastRequest())?.summary ?? null;
      if (summary !== null && summary !== summaries.at(-1)) summaries.push(summary);
      if (summaries.length >= 2) break;
    }
    expect(summaries.length).toBeGreaterThanOrEqual(2);

    // Edit the 3rd message in place: a branch that forks before both folds reads its own history.
    const third = users().nth(2);
    await third.scrollIntoViewIfNeeded();
    await third.hover();
    await third.getByRole("button", { name: "Edit" }).click();
    const editor = page.getByRole("textbox", { name: "Edit message" });
    await editor.fill(editedWords);
    await editor.press("Enter");
    await expect.poll(() => users().count(), patient).toBe(3);
    await waitUntilReady();
    // The provider was sent that branch alone, as its own chat was: none of the words after the edit, no summary
    // of them (only the fold it shares, of the turns before it).
    const afterEdit = await lastRequest();
    expect(afterEdit).toEqual(linear);
    expect(afterEdit?.summary ?? null).not.toBe(summaries.at(-1));

    // Regenerate its answer twice: three versions of it.
    for (const count of [2, 3]) {
      const answer = answers().last();
      await answer.hover();
      await answer.getByRole("button", { name: "Regenerate" }).click();
      await waitUntilReady();
      await expect
        .poll(() => answers().last().locator("[data-nacre-branch-count]").textContent(), patient)
        .toContain(`${count} / ${count}`);
      expect(await lastRequest()).toEqual(linear);
    }

    // Every version with the picker: the answer's three, then the first version of the 3rd message.
    const answerPicker = answers().last().getByRole("group", { name: "Versions" });
    for (const shown of ["2 / 3", "1 / 3"]) {
      await answerPicker.getByRole("button", { name: "Previous version" }).click();
      await expect
        .poll(() => answerPicker.locator("[data-nacre-branch-count]").textContent(), patient)
        .toContain(shown);
    }
    const edited = users().nth(2);
    await edited.getByRole("button", { name: "Previous version" }).click();
    await expect.poll(() => users().count(), patient).toBeGreaterThan(3);
    // The first branch is whole, its divider back where its memory starts.
    await expect.poll(() => page.locator("[data-nacre-summary-divider-trigger]").count(), patient).toBe(1);
    const chosenUsers = await users().count();

    // A reload: the same branch, every version a click away.
    await page.reload();
    await waitUntilReady();
    await expect.poll(() => users().count(), patient).toBe(chosenUsers);
    await expect
      .poll(() => users().nth(2).locator("[data-nacre-branch-count]").textContent(), patient)
      .toContain("1 / 2");
    await expect.poll(() => page.locator("[data-nacre-summary-divider-trigger]").count(), patient).toBe(1);
    // The next turn on the chosen branch is sent as that branch, with its own summary.
    await sendAndWait("And what is left to do?");
    expect((await lastRequest())?.summary).toBe(summaries.at(-1));
  });

  it("should meet no page error on the way", () => {
    expect(pageErrors).toEqual([]);
  });
});
