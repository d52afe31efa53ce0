// What the examples' versions tests share: #34's "branch alone" check (what a linear chat of a branch is sent,
// replayed on a fresh API engine over the same fake provider, from the provider's own record of requests), their
// chat's texts, and editing a message in nacre's editor.
import { createApiEngine, createMemoryChatStore, createProvider } from "@conch/engine-client";
import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";
import { type DemoFakeProvider, firstChatModel, summariserModel } from "../dev/api/fake-provider.js";
import {
  type ExampleInChromium,
  type ExampleName,
  foldsSeen,
  sendUntilFolded,
  startExampleInChromium,
} from "./example-harness.js";
import { recordedDemoTurns } from "./helpers.js";

/** The chat model's requests (not the summariser's), as the fake provider received them. */
export function chatModelBodies(fake: DemoFakeProvider): unknown[] {
  return fake.server
    .chatRequests()
    .filter((request) => request.model === firstChatModel)
    .map((request) => request.body);
}

/**
 * The chat model's requests for a linear chat of the person's `texts`, one turn each, on a fresh engine over
 * the same fake provider, folding in the turn that needs it (as the examples' versions tests run theirs).
 */
export async function linearChatRequests(fake: DemoFakeProvider, texts: readonly string[]): Promise<unknown[]> {
  const engine = createApiEngine({
    provider: createProvider("openrouter", {
      baseURL: fake.server.baseURL,
      local: false,
      cheapestModel: summariserModel,
    }),
    model: firstChatModel,
    store: createMemoryChatStore(),
    foldAhead: false,
  });
  const from = chatModelBodies(fake).length;
  for (const [index, text] of texts.entries()) {
    const end = await engine.sendTurn({ chatId: "linear", seq: index * 2, text }).done;
    expect(end.status).toBe("done");
  }
  return chatModelBodies(fake).slice(from);
}

/** The versions tests' chat: its id, the 3rd message's edited text, and the message sent after the reload. */
export const versionsChat = {
  id: "versions",
  editedText: "An edited third message: start from the tests instead.",
  nextText: "And what is left to do?",
} as const;

/**
 * Starts `example` for a versions test, on the versions chat: folds happen in the turn that needs them (no fold
 * ahead), so that the chat and its linear replay fold at the same turns.
 */
export function startVersionsExample(example: ExampleName): Promise<ExampleInChromium> {
  return startExampleInChromium(example, { foldAhead: false, chunkDelayMs: 1, path: `?chat=${versionsChat.id}` });
}

/**
 * Sends the demo's recorded turns with `send`, again and again (up to 40), until the chat has folded twice, and
 * expects it did, the chat model asked once a turn. Returns the texts sent: the first branch.
 */
export async function foldTwice(fake: DemoFakeProvider, send: (text: string) => Promise<void>): Promise<string[]> {
  const folds = foldsSeen(fake);
  const turns = recordedDemoTurns().map((turn) => turn.person);
  const sent = await sendUntilFolded(turns, send, () => folds() >= 2, 40);
  expect(folds()).toBeGreaterThanOrEqual(2);
  expect(chatModelBodies(fake)).toHaveLength(sent.length);
  return sent;
}

/**
 * Regenerates the last answer twice (Regenerate under it), waiting after each until its picker counts one version
 * more (`countOf` reads a row's "n / m") and the page is `ready`.
 */
export async function regenerateTwice(
  lastAnswer: () => Locator,
  countOf: (row: Locator) => Locator,
  ready: () => Promise<void>,
): Promise<void> {
  for (const count of [2, 3]) {
    const answer = lastAnswer();
    await answer.hover();
    await answer.getByRole("button", { name: "Regenerate" }).click();
    await expect.poll(() => countOf(lastAnswer()).textContent(), { timeout: 60_000 }).toBe(`${count} / ${count}`);
    await ready();
  }
}

/** Edits the person's message `row` in place with nacre's message editor (Edit under it, then Send). */
export async function editMessage(page: Page, row: Locator, text: string): Promise<void> {
  await row.scrollIntoViewIfNeeded();
  await row.hover();
  await row.getByRole("button", { name: "Edit" }).click();
  const editor = page.locator("[data-nacre-message-editor]");
  await editor.getByRole("textbox", { name: "Edit message" }).fill(text);
  await editor.getByRole("button", { name: "Send" }).click();
}

/**
 * Each request the chat model received is the one a linear chat of its branch alone is sent: the first branch
 * (`sent`, then the next message after the reload, its one request last) and the edited one (the first two
 * messages, then the edited 3rd, answered three times: once, then regenerated twice, between the two).
 */
export async function expectEachBranchLinear(fake: DemoFakeProvider, sent: readonly string[]): Promise<void> {
  const received = chatModelBodies(fake);
  const firstBranch = received.slice(0, sent.length);
  const onEditedBranch = received.slice(sent.length, sent.length + 3);
  const afterReload = received.slice(sent.length + 3);
  expect(afterReload).toHaveLength(1);
  const linearEdited = await linearChatRequests(fake, [...sent.slice(0, 2), versionsChat.editedText]);
  expect(onEditedBranch).toEqual([linearEdited[2], linearEdited[2], linearEdited[2]]);
  const linearFirst = await linearChatRequests(fake, [...sent, versionsChat.nextText]);
  expect([...firstBranch, ...afterReload]).toEqual(linearFirst);
}
