import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider } from "@conch/engine-client";
import { createRemoteEngine } from "@conch/engine-client/remote";
import type { Browser, Locator, Page } from "playwright-core";
import { build, defaultClientConditions } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DemoFakeProvider,
  firstChatModel,
  loadSharedConversations,
  startDemoFakeProvider,
  summariserModel,
} from "../dev/api/fake-provider.js";
import { conversationsDir } from "../dev/transcript-plugin.js";
import { createChatServer } from "../examples/assistant-ui-chat/server.js";
import { launchChromium, recordedDemoTurns, repoRoot } from "./helpers.js";
import { chatModelBodies, linearChatRequests } from "./versions-replay.js";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };
const chatId = "versions";
const editedText = "An edited third message: start from the tests instead.";
const nextText = "And what is left to do?";

/**
 * #34's acceptance in the assistant-ui example, in Chromium: a chat of up to 40 real turns until it has folded
 * twice, its 3rd message edited in assistant-ui's edit composer and answered, that answer regenerated twice (its
 * Reload), every version reached with its BranchPicker, a reload: every version there, the active branch the one
 * chosen, the divider where that branch's memory starts, and each request the fake provider received the one a
 * linear chat of that branch alone is sent (replayed on a second engine over the same provider). Folds happen in
 * the turn that needs them (no fold ahead), so that the chat and its replay fold at the same turns.
 */
describe("examples/assistant-ui-chat: versions (edit, regenerate, the BranchPicker) in Chromium", () => {
  let fake: DemoFakeProvider;
  let server: Server;
  let folder: string;
  let url: string;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const turns = recordedDemoTurns().map((turn) => turn.person);

  const rows = (role: "user" | "assistant") => page.locator(`.message[data-role="${role}"]`);
  const divider = () => page.locator("[data-nacre-summary-divider]");
  const countOf = (row: Locator) => row.locator("[data-nacre-branch-count]");
  const chatBodies = () => chatModelBodies(fake);
  const chat = async () => (await createRemoteEngine({ baseURL: `${url}api/engine` })).loadChat(chatId);

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
    folder = await mkdtemp(join(tmpdir(), "assistant-ui-chat-versions-"));
    const pageDir = join(folder, "page");
    // Built as `npm run build` does, from the workspace's sources.
    await build({
      configFile: join(repoRoot, "examples/assistant-ui-chat/vite.config.ts"),
      resolve: { conditions: ["source", ...defaultClientConditions] },
      build: { outDir: pageDir, emptyOutDir: true, reportCompressedSize: false },
      logLevel: "warn",
    });
    fake = await startDemoFakeProvider({
      dialect: "openrouter",
      conversations: loadSharedConversations(conversationsDir(repoRoot)),
      chunkDelayMs: 1,
    });
    server = createChatServer({
      provider: createProvider("openrouter", {
        baseURL: fake.server.baseURL,
        local: false,
        cheapestModel: summariserModel,
      }),
      model: firstChatModel,
      dataDir: join(folder, "chats"),
      pageDir,
      foldAhead: false,
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 860 } });
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${url}?chat=${chatId}`);
  });
  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise((resolve) => server.close(resolve));
    await fake?.server.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("should edit the 3rd message of a chat folded twice, regenerate twice, move between every version, and keep them across a reload", async () => {
    await page.getByRole("textbox", { name: "Message" }).waitFor(patient);
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

    // Edit the 3rd message in assistant-ui's edit composer, in place: a branch forking before both folds.
    const third = rows("user").nth(2);
    await third.scrollIntoViewIfNeeded();
    await third.hover();
    await third.getByRole("button", { name: "Edit" }).click();
    const editor = page.locator("[data-nacre-message-editor]");
    await editor.getByRole("textbox", { name: "Edit message" }).fill(editedText);
    await editor.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => rows("user").count(), patient).toBe(3);
    await waitUntilReady();
    await expect.poll(() => countOf(rows("user").nth(2)).textContent(), patient).toBe("2 / 2");
    expect(await divider().count()).toBe(0);

    // Regenerate its answer twice: three versions of it.
    for (const count of [2, 3]) {
      const answer = rows("assistant").last();
      await answer.hover();
      await answer.getByRole("button", { name: "Regenerate" }).click();
      await expect.poll(() => countOf(rows("assistant").last()).textContent(), patient).toBe(`${count} / ${count}`);
      await waitUntilReady();
    }
    const onEditedBranch = chatBodies().slice(firstBranch.length);
    expect(onEditedBranch).toHaveLength(3);

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
