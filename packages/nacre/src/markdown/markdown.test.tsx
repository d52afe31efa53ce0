import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { Markdown, renderMarkdown } from "./index.js";
import { safeUrl } from "./safe-url.js";

describe("Markdown", () => {
  describe("given headings, lists, a table, a code fence and inline code", () => {
    it("should render them as those elements", () => {
      const text = [
        "## Plan",
        "",
        "- one with `npm test`",
        "- two ~~old~~",
        "",
        "| step | who |",
        "| --- | --- |",
        "| build | ana |",
        "",
        "```ts",
        "const a = 1;",
        "```",
      ].join("\n");
      render(<Markdown text={text} />);
      expect(screen.getByRole("heading", { level: 2, name: "Plan" })).toBeInTheDocument();
      expect(screen.getAllByRole("listitem")).toHaveLength(2);
      expect(screen.getByText("npm test").tagName).toBe("CODE");
      expect(screen.getByText("old").tagName).toBe("DEL");
      const table = screen.getByRole("table");
      expect(within(table).getByRole("cell", { name: "ana" })).toBeInTheDocument();
      expect(table.parentElement).toHaveAttribute("data-nacre-table");
      const block = document.querySelector("[data-nacre-code-block]");
      expect(block).toHaveAttribute("data-language", "ts");
      expect(block?.querySelector("pre code")).toHaveTextContent("const a = 1;");
    });
  });

  describe("when a code block's copy button is pressed", () => {
    it("should put the code on the clipboard and say it copied", async () => {
      const user = userEvent.setup();
      render(<Markdown text={"```sh\npnpm install\npnpm dev\n```"} />);
      await user.click(screen.getByRole("button", { name: "Copy" }));
      expect(await navigator.clipboard.readText()).toBe("pnpm install\npnpm dev");
      expect(await screen.findByRole("button", { name: "Copied" })).toHaveAttribute("data-copied");
    });
  });

  describe("given a fence cut off mid-stream", () => {
    it("should render a code block to the end of the text, and the text before it as prose", () => {
      render(<Markdown text={"Here it is:\n\n```js\nconst a = 1;\nalert('x')"} />);
      expect(screen.getByText("Here it is:").tagName).toBe("P");
      expect(document.querySelector("[data-nacre-code-block] code")?.textContent).toBe("const a = 1;\nalert('x')");
    });
  });

  describe("given a table cut off after its header row", () => {
    it("should show the row as text until the table is complete", () => {
      const { rerender } = render(<Markdown text={"| step | who |"} />);
      expect(screen.queryByRole("table")).toBeNull();
      expect(screen.getByText("| step | who |")).toBeInTheDocument();
      rerender(<Markdown text={"| step | who |\n| --- | --- |\n| build"} />);
      expect(screen.getByRole("table")).toBeInTheDocument();
    });
  });

  describe("given raw HTML in the model's text", () => {
    it("should show it as text and create no element from it", () => {
      render(
        <Markdown text={'<script>alert(1)</script>\n\nHi <b onclick="x()">bold</b> <img src=x onerror=alert(2)>'} />,
      );
      expect(document.querySelector("script, b, img")).toBeNull();
      expect(screen.getByText("<script>alert(1)</script>")).toBeInTheDocument();
      expect(document.body).toHaveTextContent('Hi <b onclick="x()">bold</b> <img src=x onerror=alert(2)>');
    });
  });

  describe("given links", () => {
    it("should keep http(s) and mailto with noopener noreferrer, and make the rest plain text", () => {
      render(
        <Markdown
          text={
            "[site](https://example.com/a) [mail](mailto:a@example.com) [bad](javascript:alert(1)) [data](data:text/html,x) [rel](/logout) <https://auto.example>"
          }
        />,
      );
      const links = screen.getAllByRole("link");
      expect(links.map((link) => link.getAttribute("href"))).toEqual([
        "https://example.com/a",
        "mailto:a@example.com",
        "https://auto.example",
      ]);
      for (const link of links) expect(link).toHaveAttribute("rel", "noopener noreferrer");
      expect(screen.getByText("bad").tagName).toBe("SPAN");
      expect(screen.getByText("rel")).toHaveAttribute("data-nacre-link-refused");
    });
  });

  describe("given an image", () => {
    it("should not load it by default, and show it as a link with its alt text", () => {
      render(<Markdown text={"![chart](https://tracker.example/pixel.png?chat=1)"} />);
      expect(document.querySelector("img")).toBeNull();
      const link = screen.getByRole("link", { name: "Image: chart (tracker.example, not loaded)" });
      expect(link).toHaveAttribute("rel", "noopener noreferrer");
    });

    it("should load it when loadImage allows the URL", () => {
      render(
        <Markdown
          text={"![ok](https://images.example/a.png) ![no](https://other.example/b.png)"}
          loadImage={(url) => url.startsWith("https://images.example/")}
        />,
      );
      const images = document.querySelectorAll("img");
      expect([...images].map((image) => image.getAttribute("src"))).toEqual(["https://images.example/a.png"]);
      expect(images[0]).toHaveAttribute("referrerpolicy", "no-referrer");
    });
  });

  describe("renderMarkdown", () => {
    it("should render the model's text as Markdown and the person's as text", () => {
      render(
        <>
          <div data-testid="model">{renderMarkdown("**yes**", { role: "assistant", streaming: false })}</div>
          <div data-testid="person">{renderMarkdown("**yes**", { role: "user", streaming: false })}</div>
        </>,
      );
      expect(within(screen.getByTestId("model")).getByText("yes").tagName).toBe("STRONG");
      expect(screen.getByTestId("person")).toHaveTextContent("**yes**");
    });
  });
});

describe("safeUrl", () => {
  it.each([
    ["https://example.com", "https://example.com"],
    ["http://example.com/x?y", "http://example.com/x?y"],
    ["mailto:a@b.c", "mailto:a@b.c"],
    ["javascript:alert(1)", null],
    [" JaVaScRiPt:alert(1)", null],
    ["data:image/png;base64,xx", null],
    ["vbscript:x", null],
    ["/relative", null],
    ["#top", null],
    ["", null],
  ])("%s → %s", (url, expected) => {
    expect(safeUrl(url)).toBe(expected);
  });
});
