// What both examples (and the dev pages) are checked for, as a reader sees it: text contrast, where the list is
// scrolled, whether a floating control sits inside the list's visible box, and screenshots light and dark.
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";

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
