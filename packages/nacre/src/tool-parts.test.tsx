import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { summariseToolArguments, ToolCall, ToolResult, textSize } from "./tool-parts.js";

describe("ToolCall", () => {
  describe("given a call with JSON arguments", () => {
    it("should be one closed line with the tool's name and the arguments summarised, opening to them in full", async () => {
      const user = userEvent.setup();
      render(<ToolCall call={{ name: "read_file", arguments: '{"path":"src/index.ts","lines":[1,40]}' }} />);
      const trigger = screen.getByRole("button", { name: /Called read_file/ });
      expect(trigger).toHaveAttribute("aria-expanded", "false");
      expect(trigger).toHaveTextContent('path: "src/index.ts", lines: [1,40]');
      expect(document.querySelector("[data-nacre-tool-arguments]")).toBeNull();
      await user.click(trigger);
      expect(trigger).toHaveAttribute("aria-expanded", "true");
      expect(document.querySelector("[data-nacre-tool-arguments]")?.textContent).toBe(
        '{\n  "path": "src/index.ts",\n  "lines": [\n    1,\n    40\n  ]\n}',
      );
    });
  });

  describe("given controlled open", () => {
    it("should follow the prop and report changes", async () => {
      const user = userEvent.setup();
      const onOpenChange = vi.fn();
      render(<ToolCall call={{ name: "ls", arguments: "{}" }} open={false} onOpenChange={onOpenChange} />);
      await user.click(screen.getByRole("button", { name: "Called ls" }));
      expect(onOpenChange).toHaveBeenCalledWith(true);
      expect(screen.getByRole("button")).toHaveAttribute("aria-expanded", "false");
    });
  });
});

describe("ToolResult", () => {
  describe("given a short result", () => {
    it("should start open, with its size on the line", () => {
      render(<ToolResult result={{ name: "ls", text: "a.txt\nb.txt" }} />);
      const trigger = screen.getByRole("button", { name: /Result of ls/ });
      expect(trigger).toHaveAttribute("aria-expanded", "true");
      expect(trigger).toHaveTextContent("2 lines, 11 characters");
      expect(document.querySelector("[data-nacre-tool-output]")?.textContent).toBe("a.txt\nb.txt");
    });
  });

  describe("given a long result", () => {
    it("should start closed, say how long it is, and open to the text as text", async () => {
      const user = userEvent.setup();
      const text = Array.from({ length: 400 }, (_, index) => `<b>line ${index}</b>`).join("\n");
      render(<ToolResult result={{ text }} />);
      const trigger = screen.getByRole("button", { name: /Result/ });
      expect(trigger).toHaveAttribute("aria-expanded", "false");
      expect(trigger).toHaveTextContent("400 lines, 6.3 K characters");
      expect(document.querySelector("[data-nacre-tool-result]")).toHaveAttribute("data-long");
      await user.click(trigger);
      expect(document.querySelector("[data-nacre-tool-output]")?.textContent).toBe(text);
      expect(document.querySelector("b")).toBeNull();
    });
  });

  describe("given an error result", () => {
    it("should say it failed and mark it", () => {
      render(<ToolResult result={{ name: "run", text: "exit 1", isError: true }} />);
      expect(screen.getByRole("button", { name: /Failed of run/ })).toBeInTheDocument();
      expect(document.querySelector("[data-nacre-tool-result]")).toHaveAttribute("data-error");
    });
  });
});

describe("summariseToolArguments", () => {
  it.each([
    ['{"q":"weather in Lyon"}', 'q: "weather in Lyon"'],
    ["{}", ""],
    ["not json at all", "not json at all"],
    ['["a","b"]', '["a","b"]'],
    [`{"text":"${"x".repeat(200)}"}`, `text: "${"x".repeat(38)}…`],
  ])("%s → %s", (input, expected) => {
    expect(summariseToolArguments(input)).toBe(expected);
  });
});

describe("textSize", () => {
  it.each([
    ["", 0, 0],
    ["one", 1, 3],
    ["one\n", 1, 4],
    ["a\nb\nc", 3, 5],
  ])("%j → %i lines, %i characters", (text, lines, characters) => {
    expect(textSize(text)).toEqual({ lines, characters });
  });
});
