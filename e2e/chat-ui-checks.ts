// What both examples (and the dev pages) are checked for, as a reader sees it: text contrast, where the list is
// scrolled, whether a floating control sits inside the list's visible box, and screenshots light and dark; and the
// checks both examples run alike (follow and jump, the meter across a reload, readable themes, copy).
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { expect } from "vitest";

/** Generous waits on conditions (a loaded 2-core machine), never fixed sleeps. */
const patient = { timeout: 60_000 };

/** WCAG contrast of two `rgb(...)` colours. */
export function contrast(foreground: string, background: string): number {
  const luminance = (color: string) => {
    const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((value) => {
      const channel = Number(value) / 255;
      return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
  };
  const [light, dark] = [luminance(foreground), luminance(background)].sort((a, b) => b - a);
  return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
}

/**
 * Each element's text colour against the first opaque background at or above it (the page's own when none is
 * set), as [colour, background, contrast].
 */
export async function textContrasts(texts: Locator): Promise<(readonly [string, string, number])[]> {
  const pairs = await texts.evaluateAll((nodes) =>
    nodes.map((node) => {
      let back: Element | null = node;
      let background = "rgba(0, 0, 0, 0)";
      while (back && /rgba\(0, 0, 0, 0\)|transparent/.test(background)) {
        background = getComputedStyle(back).backgroundColor;
        back = back.parentElement;
      }
      // Nothing painted: the canvas, white unless the page's color-scheme is dark.
      if (/rgba\(0, 0, 0, 0\)|transparent/.test(background)) {
        background = getComputedStyle(document.documentElement).colorScheme.includes("dark")
          ? "rgb(18, 18, 18)"
          : "rgb(255, 255, 255)";
      }
      return [getComputedStyle(node).color, background] as const;
    }),
  );
  return pairs.map(([color, background]) => [color, background, contrast(color, background)] as const);
}

/** The buttons drawn as the browser's own (Chromium's have an outset border), by their text: none, with nacre.css. */
export function browserDefaultButtons(page: Page): Promise<string[]> {
  return page
    .locator("button")
    .evaluateAll((buttons) =>
      buttons
        .filter((button) => getComputedStyle(button).borderTopStyle === "outset")
        .map((button) => button.textContent ?? ""),
    );
}

/** How far the scroller is from its end, in pixels. */
export function gapToEnd(scroller: Locator): Promise<number> {
  return scroller.evaluate((node) => node.scrollHeight - node.scrollTop - node.clientHeight);
}

/** Whether `inner`'s box lies inside `outer`'s visible box. */
export async function insideBox(inner: Locator, outer: Locator): Promise<boolean> {
  const [a, b] = await Promise.all([inner.boundingBox(), outer.boundingBox()]);
  if (!a || !b) return false;
  return a.y >= b.y && a.y + a.height <= b.y + b.height && a.x >= b.x && a.x + a.width <= b.x + b.width;
}

/**
 * Screenshots of `url` at 1200 and 390 px wide, light and dark (the system's colour scheme), into `directory` as
 * `{name}-{light|dark}-{1200|390}.png`, each once `ready` says the page is there and it is scrolled to its end.
 */
export async function themedScreenshots(
  browser: Browser,
  url: string,
  options: {
    readonly directory: string;
    readonly name: string;
    readonly ready: (page: Page) => Promise<void>;
    readonly scroller: string;
  },
): Promise<string[]> {
  const written: string[] = [];
  for (const colorScheme of ["light", "dark"] as const) {
    for (const width of [1200, 390]) {
      const page = await browser.newPage({ viewport: { width, height: 760 }, colorScheme });
      try {
        await page.goto(url);
        await options.ready(page);
        await page
          .locator(options.scroller)
          .evaluate((node) => node.scrollTo({ top: node.scrollHeight, behavior: "instant" }));
        await page.evaluate(
          () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))),
        );
        const path = join(options.directory, `${options.name}-${colorScheme}-${width}.png`);
        await page.screenshot({ path });
        written.push(path);
      } finally {
        await page.close();
      }
    }
  }
  return written;
}

/** A chat page under test: its page, its scrolling list, and how to wait until a turn is over. */
export interface ChatPage {
  readonly page: Page;
  /** The scroller of the messages. */
  readonly list: () => Locator;
  /** Resolves once the page is ready for the next message. */
  readonly ready: (page?: Page) => Promise<void>;
}

/**
 * While an answer is being written (slowly, and already begun): the list follows it; once the reader scrolls up,
 * it keeps their place as the answer goes on, with Jump to latest floating inside the list's visible box; the
 * jump takes them back to the end. `screenshot` is written with the jump shown.
 */
export async function checkFollowAndJump(
  chat: ChatPage,
  lastAnswerText: () => Promise<string>,
  screenshot: string,
): Promise<void> {
  const { page, list } = chat;
  // Followed: as the answer grows, its end stays in view.
  for (let look = 0; look < 2; look += 1) {
    const written = (await lastAnswerText()).length;
    await expect.poll(async () => (await lastAnswerText()).length, patient).toBeGreaterThan(written);
    expect(await gapToEnd(list())).toBeLessThan(32);
  }
  // The reader scrolls up: the page stays where they are while the answer goes on.
  await list().hover();
  await page.mouse.wheel(0, -500);
  const jump = page.locator('[data-nacre-jump-to-latest][data-state="visible"]');
  await jump.waitFor(patient);
  const place = await list().evaluate((node) => node.scrollTop);
  const written = (await lastAnswerText()).length;
  await expect.poll(async () => (await lastAnswerText()).length, patient).toBeGreaterThan(written);
  expect(Math.abs((await list().evaluate((node) => node.scrollTop)) - place)).toBeLessThan(2);
  // Jump to latest floats over the list's bottom edge, in its visible box, and takes the reader to the end.
  expect(await insideBox(jump, list())).toBe(true);
  await page.screenshot({ path: screenshot });
  await jump.click();
  await expect.poll(() => gapToEnd(list()), patient).toBeLessThan(32);
  await expect.poll(() => jump.count(), patient).toBe(0);
  await chat.ready();
}

/** After a reload the page opens at the end of the chat, its context meter saying what it said before. */
export async function checkMeterAfterReload(chat: ChatPage): Promise<void> {
  const { page, list } = chat;
  const meter = page.locator("[data-nacre-context-meter]");
  await meter.waitFor(patient);
  const before = await meter.evaluate((node) => [node.textContent, node.getAttribute("aria-valuenow")]);
  expect(before[0]).toMatch(/\d/);
  await page.reload();
  await chat.ready();
  await expect
    .poll(() => meter.evaluate((node) => [node.textContent, node.getAttribute("aria-valuenow")]), patient)
    .toEqual(before);
  await expect.poll(() => gapToEnd(list()), patient).toBeLessThan(32);
}

/**
 * Light and dark, at 1200 and 390 px: every `texts` element's colour on its background reads at ≥ 4.5:1, and no
 * button is drawn as the browser's own (nacre.css styles them). Four screenshots, `{name}-{scheme}-{width}.png`.
 */
export async function checkReadableThemes(
  browser: Browser,
  url: string,
  options: {
    readonly directory: string;
    readonly name: string;
    readonly scroller: string;
    /** The message texts whose contrast is read. */
    readonly texts: string;
    readonly ready: (page: Page) => Promise<void>;
  },
): Promise<void> {
  const shots = await themedScreenshots(browser, url, {
    directory: options.directory,
    name: options.name,
    scroller: options.scroller,
    ready: async (themed) => {
      await options.ready(themed);
      await themed.locator(options.texts).first().waitFor(patient);
      for (const [color, background, ratio] of await textContrasts(themed.locator(options.texts))) {
        expect(ratio, `${color} on ${background}`).toBeGreaterThanOrEqual(4.5);
      }
      expect(await browserDefaultButtons(themed)).toEqual([]);
    },
  });
  expect(shots).toHaveLength(4);
}

/**
 * In a page of its own with the clipboard allowed: the last answer's actions show on hover, and its Copy puts
 * `expected()` (the answer's text as the log holds it) on the clipboard. Errors of the page go to `pageErrors`.
 */
export async function checkCopyFromActions(
  browser: Browser,
  url: string,
  options: {
    readonly answer: string;
    readonly ready: (page: Page) => Promise<void>;
    readonly expected: () => Promise<string>;
    readonly pageErrors: string[];
    /** Whether the button says "Copied" after it copied (Nacre's `MessageCopy` does; assistant-ui's Copy does not). */
    readonly saysCopied: boolean;
  },
): Promise<void> {
  const context = await browser.newContext({
    viewport: { width: 1100, height: 860 },
    permissions: ["clipboard-read", "clipboard-write"],
  });
  try {
    const reader = await context.newPage();
    reader.on("pageerror", (error) => options.pageErrors.push(String(error)));
    await reader.goto(url);
    await options.ready(reader);
    const answer = reader.locator(options.answer).last();
    const actions = answer.locator("[data-nacre-message-actions]");
    // Hidden until the reader points at the answer (in the DOM all along, never mounted on hover).
    expect(await actions.evaluate((node) => getComputedStyle(node).opacity)).toBe("0");
    await answer.hover();
    await expect.poll(() => actions.evaluate((node) => getComputedStyle(node).opacity), patient).toBe("1");
    await actions.locator("[data-nacre-message-copy]").click();
    if (options.saysCopied) {
      await expect.poll(() => actions.locator("[data-nacre-message-copy]").textContent(), patient).toBe("Copied");
    }
    expect(await reader.evaluate(() => navigator.clipboard.readText())).toBe(await options.expected());
  } finally {
    await context.close();
  }
}
