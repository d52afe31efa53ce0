import type { StreamingMessageState } from "@conch/engine-client";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RenderTextProvider, StreamingMessage } from "../message.js";
import type { StreamBlock } from "../message-list-stream.js";
import { Markdown, renderMarkdown, renderMarkdownBlock } from "./index.js";

function state(text: string, done = false): StreamingMessageState {
  return { seq: 1, text, thinking: "", toolCalls: [], done };
}

/** Streams `text` into a StreamingMessage in deltas of `size` characters, inside the Markdown renderers. */
function streamInto(text: string, size: number) {
  const ui = (shown: string) => (
    <RenderTextProvider renderText={renderMarkdown} renderBlock={renderMarkdownBlock}>
      <ol>
        <StreamingMessage streaming={state(shown)} />
      </ol>
    </RenderTextProvider>
  );
  const view = render(ui(text.slice(0, size)));
  for (let end = size * 2; end < text.length + size; end += size) view.rerender(ui(text.slice(0, end)));
  return view;
}

describe("a streaming reply in Markdown (renderMarkdownBlock)", () => {
  describe("given prose, a heading, a list and a code fence, delta by delta", () => {
    it("should render each as its element, block by block, with the code exact", async () => {
      const text = [
        "## Plan",
        "",
        "First **bold** words.",
        "",
        "- one",
        "- two",
        "",
        "```ts",
        "const a = 1;",
        "",
        "const b = 2;",
        "```",
        "",
        "After the code.",
      ].join("\n");
      streamInto(text, 7);
      expect(screen.getByRole("heading", { level: 2, name: "Plan" })).toBeInTheDocument();
      expect(screen.getByText("bold").tagName).toBe("STRONG");
      expect(
        screen
          .getAllByRole("listitem")
          .filter((item) => item.tagName === "LI" && !item.hasAttribute("data-nacre-message")),
      ).toHaveLength(2);
      const code = document.querySelector("[data-nacre-code-block] code");
      expect(code?.textContent).toBe("const a = 1;\n\nconst b = 2;");
      expect(screen.getByText("After the code.")).toBeInTheDocument();
      await userEvent.setup().click(screen.getByRole("button", { name: "Copy" }));
      expect(await navigator.clipboard.readText()).toBe("const a = 1;\n\nconst b = 2;");
    });
  });

  describe("given a 96 KB reply of short code lines, cut off mid-fence", () => {
    it("should show one code block with every line so far, as text, and copy them all", async () => {
      const lines = Array.from({ length: 3200 }, (_, index) => `  line_${index} = ${index};`);
      const text = `\`\`\`js\n${lines.join("\n")}\n`;
      streamInto(text, 1500);
      const blocks = document.querySelectorAll("[data-nacre-code-block]");
      expect(blocks).toHaveLength(1);
      expect(blocks[0]?.querySelector("code")?.textContent).toBe(`${lines.join("\n")}\n`);
      expect(blocks[0]).toHaveAttribute("data-language", "js");
      await userEvent.setup().click(screen.getByRole("button", { name: "Copy" }));
      expect(await navigator.clipboard.readText()).toBe(lines.join("\n"));
    });
  });

  describe.each([
    ["mid-line", 1_000, ""],
    ["closed, the fence alone in the last chunk", 64 * 3 - 1, "```\n"],
    ["closed mid-chunk", 1_000, "```\n\nAfter."],
  ])("given a long code fence %s", (_, count, end) => {
    it("should copy exactly its lines", async () => {
      const lines = Array.from({ length: count }, (_, index) => `x${index}`);
      streamInto(`\`\`\`\n${lines.join("\n")}\n${end}`, 333);
      await userEvent.setup().click(screen.getByRole("button", { name: "Copy" }));
      expect(await navigator.clipboard.readText()).toBe(lines.join("\n"));
    });
  });

  describe("given hostile text mid-stream", () => {
    it("should keep raw HTML as text", () => {
      streamInto('Look: <img src="https://evil.example/x.png" onerror="alert(1)"> and <script>alert(2)</script>', 9);
      expect(document.querySelector("img")).toBeNull();
      expect(document.querySelector("script")).toBeNull();
      expect(screen.getByText(/<script>alert\(2\)<\/script>/)).toBeInTheDocument();
    });
  });
});

describe("StreamingMessage without a renderer", () => {
  it("should render plain text through StreamingText, the text exact", () => {
    const text = Array.from({ length: 300 }, (_, index) => `row ${index}`).join("\n");
    const view = render(
      <ol>
        <StreamingMessage streaming={state(text)} />
      </ol>,
    );
    const shown = view.container.querySelector("[data-nacre-message-text]");
    // Line breaks are <br> elements.
    expect(shown?.textContent).toBe(text.replaceAll("\n", ""));
    expect(shown?.querySelectorAll("br")).toHaveLength(299);
    expect(view.container.querySelectorAll('[data-nacre-stream-block][data-kind="prose"]')).toHaveLength(1);
  });
});

/** The open prose block of a reply, as `StreamingText` hands it to a block renderer. */
function openProse(text: string): StreamBlock {
  return { start: 0, kind: "prose", lang: "", chunks: [text], closed: false };
}

/** The open prose block of `text` through `renderMarkdownBlock`, as `StreamingText` renders it. */
function OpenProse({ text }: { text: string }) {
  return renderMarkdownBlock(openProse(text));
}

/** What `Markdown` renders for `text` on its own (the non-streamed rendering). */
function wholeHtml(text: string): string {
  const whole = render(<Markdown text={text} />);
  const html = whole.container.innerHTML;
  whole.unmount();
  return html;
}

const words = fc.constantFrom("The", "export", "reads", "é", "totals", "x_y");
/**
 * Words, closed and unclosed inline syntax, raw HTML, links and the odd block marker; with sentence ends, or
 * without (a run-on paragraph, cut inside its long sentences, mostly of closed syntax so that cuts happen).
 */
const sentenceToken = (sentenceEnds: boolean) =>
  fc.oneof(
    { weight: 8, arbitrary: words },
    {
      weight: 8,
      arbitrary: sentenceEnds
        ? fc.constantFrom(" ", ". ", ". The ", "! A ", "? **B** c ", "  ")
        : fc.constantFrom(" ", "  ", " **B** c "),
    },
    {
      weight: sentenceEnds ? 0 : 4,
      arbitrary: fc.constantFrom(
        "**bold**",
        "`code`",
        "~~gone~~",
        "[docs](https://a.example/d)",
        "[1]",
        " * ",
        "\u00a0",
      ),
    },
    {
      weight: sentenceEnds ? 4 : 1,
      arbitrary: fc.constantFrom(
        "**bold**",
        "*",
        "**",
        "_",
        "`code`",
        "`",
        "~~gone~~",
        "~",
        "[docs](https://a.example/d)",
        "[",
        "]",
        "![pic](https://a.example/p.png)",
        "[bad](javascript:alert(1))",
        "<script>alert(1)</script>",
        "<b>",
        "&amp;",
        "\\",
        "www.a.example",
        "https://a.example/x.",
        " * ",
        " ** ",
        " ~ ",
        " _ ",
        "[1]",
        "[^2]",
        "![",
        "](https://a.example/y)",
        "a < b",
        "<https://a.example/z>",
        "\u00a0",
      ),
    },
    {
      weight: 1,
      arbitrary: sentenceEnds
        ? fc.constantFrom("\n", "\nAnd ", "\n- ", "\n# ", "\n---", "\n| a |", " - ", " 1. ")
        : fc.constantFrom("\nAnd ", " - "),
    },
  );
const paragraphOf = (minLength: number, maxLength: number, sentenceEnds = true) =>
  fc
    .array(sentenceToken(sentenceEnds), { minLength, maxLength, size: "max" })
    .map((tokens) => `Start ${tokens.join("")}`);
/** Growth points of `text`: the prefixes it is rendered at, one after another. */
const growthOf = (text: string) =>
  fc.uniqueArray(fc.integer({ min: 1, max: text.length }), { maxLength: 8 }).map((ends) => ends.sort((a, b) => a - b));

/** Renders `text` grown through `ends` and checks each step against the whole paragraph's rendering. */
function expectPiecesAsWhole(text: string, ends: readonly number[]) {
  const view = render(<OpenProse text={text.slice(0, ends[0] ?? text.length)} />);
  for (const end of [...ends, text.length]) {
    const shown = text.slice(0, end);
    view.rerender(<OpenProse text={shown} />);
    expect(view.container.innerHTML).toBe(wholeHtml(shown));
  }
  view.unmount();
}

describe("an open paragraph streamed in pieces (renderMarkdownBlock)", () => {
  it("should render exactly as the whole paragraph does, for any text and any growth", () => {
    fc.assert(
      fc.property(
        paragraphOf(1, 50).chain((text) => fc.tuple(fc.constant(text), growthOf(text))),
        ([text, ends]) => expectPiecesAsWhole(text, ends),
      ),
      { numRuns: 120 },
    );
  }, 60_000);

  it("should render a run-on paragraph (cut inside long sentences) exactly as whole", () => {
    fc.assert(
      fc.property(
        paragraphOf(60, 200, false).chain((text) => fc.tuple(fc.constant(text), growthOf(text))),
        ([text, ends]) => expectPiecesAsWhole(text, ends),
      ),
      { numRuns: 30 },
    );
  }, 60_000);

  it("should render a long paragraph's finished sentences once each, re-parsing only the last", () => {
    const sentence = "The export reads each month and writes one row per customer, with the totals. ";
    const text = `**Note:** ${sentence.repeat(30)}`;
    const view = render(<OpenProse text={text.slice(0, 20)} />);
    for (let end = 40; end <= text.length; end += 20) {
      view.rerender(<OpenProse text={text.slice(0, end)} />);
    }
    view.rerender(<OpenProse text={text} />);
    expect(view.container.innerHTML).toBe(wholeHtml(text));
    const paragraphs = view.container.querySelectorAll("p");
    expect(paragraphs).toHaveLength(1);
    // Each finished sentence is its own run of nodes (its own memoised piece), the paragraph one element.
    expect(paragraphs[0]?.childNodes.length).toBeGreaterThanOrEqual(30);
    expect(screen.getByText("Note:").tagName).toBe("STRONG");
  });

  it("should keep hostile text inert in finished pieces and in the tail", () => {
    const text = [
      "First [click](javascript:alert(1)) here.",
      'Then <img src="https://evil.example/x.png" onerror="alert(1)"> there.',
      "A ![beacon](https://evil.example/b.png) image.",
      "Last <script>alert(2)</script>",
    ].join(" ");
    const view = render(<OpenProse text={text.slice(0, 10)} />);
    for (let end = 10; end <= text.length; end += 9) view.rerender(<OpenProse text={text.slice(0, end)} />);
    view.rerender(<OpenProse text={text} />);
    expect(view.container.querySelector("img")).toBeNull();
    expect(view.container.querySelector("script")).toBeNull();
    expect(view.container.querySelector('a[href^="javascript"]')).toBeNull();
    expect(view.container.textContent).toContain("<script>alert(2)</script>");
    expect(view.container.innerHTML).toBe(wholeHtml(text));
  });
});
