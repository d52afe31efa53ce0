import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { RenderTextProvider, StreamingMessage } from "../message.js";
import { Markdown, renderMarkdown, renderMarkdownBlock } from "./index.js";

afterEach(cleanup);

declare global {
  interface Window {
    nacrePwned?: string[];
  }
}

/** A URL on this page's own origin, so a fetch of it shows in Resource Timing whatever the server answers. */
const beacon = (name: string) => `${location.origin}/nacre-beacon-${name}-${Math.random().toString(36).slice(2)}.png`;

function fetched(url: string): boolean {
  return performance.getEntriesByType("resource").some((entry) => entry.name === url);
}

/**
 * Waits until a control image, lazy like Markdown's and put in the page after the text, has loaded and been timed:
 * an image the text made was in the same lazy-loading pass, asked of the same server, so it would be timed by then.
 */
async function settle() {
  const url = beacon("control");
  const control = document.createElement("img");
  control.loading = "lazy";
  control.alt = "";
  await new Promise((resolve) => {
    control.onload = resolve;
    control.onerror = resolve;
    control.src = url;
    document.body.append(control);
  });
  control.remove();
  await expect.poll(() => fetched(url), { timeout: 30_000 }).toBe(true);
}

/** Every link, span and button clicked: no script ran, no active element exists, no beacon was fetched, links are safe. */
async function expectInert(container: HTMLElement, beacons: readonly string[]) {
  for (const element of container.querySelectorAll<HTMLElement>("a, span, button")) element.click();
  await settle();
  expect(window.nacrePwned).toEqual([]);
  expect(container.querySelectorAll("script, iframe, svg, img")).toHaveLength(0);
  for (const url of beacons) expect(fetched(url)).toBe(false);
  for (const link of container.querySelectorAll("a")) {
    expect(link.getAttribute("href") ?? "").toMatch(/^(https?:|mailto:)/);
  }
}

describe("Markdown in Chromium, given hostile model text", () => {
  it("should execute nothing and fetch nothing, and show the markup as text", async () => {
    window.nacrePwned = [];
    const image = beacon("image");
    const rawImage = beacon("raw");
    const text = [
      "<script>window.nacrePwned.push('script')</script>",
      "",
      `Inline <img src="${rawImage}" onerror="window.nacrePwned.push('onerror')"> and <svg onload="window.nacrePwned.push('svg')"></svg>`,
      "",
      `<iframe src="javascript:parent.nacrePwned.push('iframe')"></iframe>`,
      "",
      "[click me](javascript:window.nacrePwned.push('link'))",
      "[data](data:text/html,<script>parent.nacrePwned.push('data')</script>)",
      "[entity](jav&#x61;script:window.nacrePwned.push('entity'))",
      "",
      `![beacon](${image})`,
      "",
      `[ref]: javascript:window.nacrePwned.push('ref')`,
      "",
      "and [ref] too",
      "",
      "```html",
      "<script>window.nacrePwned.push('fence')</script>",
      "unterminated fence, the page must go on",
    ].join("\n");
    const view = render(
      <div>
        <Markdown text={text} />
        <p id="after">after the message</p>
      </div>,
    );
    await expectInert(view.container, [image, rawImage]);
    expect(view.container.textContent).toContain("<script>window.nacrePwned.push('script')</script>");
    // The open fence is one code block inside the message; what follows the message is still its own element.
    expect(view.container.querySelector("[data-nacre-code-block] code")?.textContent).toContain(
      "unterminated fence, the page must go on",
    );
    expect(document.getElementById("after")?.closest("[data-nacre-markdown]")).toBeNull();
  });

  it("should fetch an image only when loadImage allows it (the detector works)", async () => {
    const allowed = beacon("allowed");
    const refused = beacon("refused");
    render(<Markdown text={`![a](${allowed}) ![b](${refused})`} loadImage={(url) => url === allowed} />);
    await expect.poll(() => fetched(allowed), { timeout: 30_000 }).toBe(true);
    await settle();
    expect(fetched(refused)).toBe(false);
  });

  it("should execute and fetch nothing while one long hostile paragraph streams in pieces", async () => {
    window.nacrePwned = [];
    const image = beacon("streamed");
    const rawImage = beacon("streamed-raw");
    // One paragraph (no line break): its finished sentences render as pieces, the last as the tail.
    const text = [
      "First sentence, plain. **Bold** and `code` are closed here.",
      `An image ![beacon](${image}) is not fetched.`,
      "A [link](javascript:window.nacrePwned.push('link')) is refused.",
      `Raw <img src="${rawImage}" onerror="window.nacrePwned.push('onerror')"> stays text.`,
      "And <script>window.nacrePwned.push('script')</script> too.",
      "The tail ends [here](https://a.example/ok) <b>open",
    ].join(" ");
    const ui = (shown: string) => (
      <div>
        <RenderTextProvider renderText={renderMarkdown} renderBlock={renderMarkdownBlock}>
          <ol>
            <StreamingMessage streaming={{ seq: 1, text: shown, thinking: "", toolCalls: [], done: false }} />
          </ol>
        </RenderTextProvider>
        <p id="after">after the message</p>
      </div>
    );
    const view = render(ui(text.slice(0, 7)));
    for (let end = 14; end < text.length + 7; end += 7) view.rerender(ui(text.slice(0, end)));
    await expectInert(view.container, [image, rawImage]);
    const markdown = view.container.querySelector("[data-nacre-markdown]");
    expect(markdown?.querySelectorAll("p")).toHaveLength(1);
    expect(markdown?.textContent).toContain("<script>window.nacrePwned.push('script')</script>");
    expect(document.getElementById("after")?.closest("[data-nacre-markdown]")).toBeNull();
  });
});
