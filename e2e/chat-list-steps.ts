// The chat list as a person uses it, the same on `pnpm dev:mock`, `pnpm dev` and `pnpm serve`: a new chat is
// listed at once, takes its title from its first message, is renamed, another is opened, one is deleted, and a
// reload shows the same list with the same chat open.
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { chatSteps } from "./helpers.js";

export async function chatListScenario(page: Page, patient: { readonly timeout: number }): Promise<void> {
  const { sendAndWait, waitUntilReady, userMessages } = chatSteps(() => page, patient);
  const list = page.getByRole("navigation", { name: "Chats" });
  const items = list.locator("[data-nacre-chat-list-item]");
  const titles = () => list.locator("[data-nacre-chat-list-title]").allTextContents();
  const current = () => list.locator('[aria-current="page"]').textContent();

  await waitUntilReady();
  const before = await titles();
  const openBefore = await current();

  // A new chat: listed at once, open, with the greeting, then titled by its first message.
  await list.getByRole("button", { name: "New chat", exact: true }).click();
  await expect.poll(titles, patient).toEqual(["New chat", ...before]);
  await expect.poll(current, patient).toBe("New chat");
  await page.locator("[data-nacre-new-chat-greeting]").waitFor(patient);
  await sendAndWait("Plan a garden for spring\nwith tomatoes and beans");
  await expect.poll(titles, patient).toEqual(["Plan a garden for spring", ...before]);
  expect(await page.locator("[data-nacre-new-chat-greeting]").count()).toBe(0);

  // Renamed from its Rename button, kept by the store.
  await list.getByRole("button", { name: "Rename “Plan a garden for spring”" }).click();
  const box = list.getByRole("textbox", { name: "Title of “Plan a garden for spring”" });
  await box.fill("Garden plans");
  await box.press("Enter");
  await expect.poll(titles, patient).toEqual(["Garden plans", ...before]);

  // A second new chat, to be deleted from the keyboard (Delete, then the question's Delete).
  await list.getByRole("button", { name: "New chat", exact: true }).click();
  await expect.poll(current, patient).toBe("New chat");
  // The new chat shown (its greeting) before sending: until then the rows are the chat open before, and the count
  // `sendAndWait` takes of them would be that chat's.
  await page.locator("[data-nacre-new-chat-greeting]").waitFor(patient);
  await sendAndWait("A chat to throw away");
  await expect.poll(titles, patient).toEqual(["A chat to throw away", "Garden plans", ...before]);
  await list.getByRole("button", { name: "A chat to throw away", exact: true }).focus();
  await page.keyboard.press("Delete");
  await list
    .getByRole("group", { name: "Delete “A chat to throw away”?" })
    .getByRole("button", { name: "Delete" })
    .click();
  await expect.poll(titles, patient).toEqual(["Garden plans", ...before]);
  // The next chat opened in its place.
  await expect.poll(current, patient).toBe("Garden plans");

  // Switch to the chat open before, then back with the arrow keys and Enter.
  if (openBefore !== null && before.length > 0) {
    await list.getByRole("button", { name: openBefore, exact: true }).click();
    await expect.poll(current, patient).toBe(openBefore);
    await waitUntilReady();
    await list.getByRole("button", { name: openBefore, exact: true }).focus();
    await page.keyboard.press("Home");
    await page.keyboard.press("Enter");
    await expect.poll(current, patient).toBe("Garden plans");
  }
  await expect.poll(() => userMessages().first().textContent(), patient).toContain("Plan a garden for spring");

  // After a reload: the same list, the same chat open, its messages there.
  await page.reload();
  await waitUntilReady();
  await expect.poll(titles, patient).toEqual(["Garden plans", ...before]);
  await expect.poll(current, patient).toBe("Garden plans");
  await expect.poll(() => userMessages().count(), patient).toBe(1);
  expect(await items.count()).toBe(before.length + 1);
}
