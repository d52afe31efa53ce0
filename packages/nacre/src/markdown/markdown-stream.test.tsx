import type { StreamingMessageState } from "@conch/engine-client";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { RenderTextProvider, StreamingMessage } from "../message.js";
import { renderMarkdown, renderMarkdownBlock } from "./index.js";

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
    it("should show one code block with every line so far, as text", () => {
      const lines = Array.from({ length: 3200 }, (_, index) => `  line_${index} = ${index};`);
      const text = `\`\`\`js\n${lines.join("\n")}\n`;
      streamInto(text, 1500);
      const blocks = document.querySelectorAll("[data-nacre-code-block]");
      expect(blocks).toHaveLength(1);
      expect(blocks[0]?.querySelector("code")?.textContent).toBe(`${lines.join("\n")}\n`);
      expect(blocks[0]).toHaveAttribute("data-language", "js");
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
