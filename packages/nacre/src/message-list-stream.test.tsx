import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { createStreamSplitter, type StreamBlock, StreamingText, splitStream } from "./message-list-stream.js";

/** Feeds a text in deltas of `size` characters and returns the blocks after each. */
function stream(text: string, size: number): StreamBlock[][] {
  const splitter = createStreamSplitter();
  const out: StreamBlock[][] = [];
  for (let end = size; end < text.length + size; end += size) out.push(splitStream(splitter, text.slice(0, end)));
  return out;
}

const joined = (blocks: readonly StreamBlock[]) => blocks.flatMap((block) => block.chunks).join("");

describe("splitStream", { timeout: 30_000 }, () => {
  describe("given prose, a code fence and more prose, delta by delta", () => {
    it("should keep the text exactly, in prose and code blocks, closed ones unchanged", () => {
      const text =
        "# Title\n\nFirst paragraph\nstill first.\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\nAfter the code.\n";
      const steps = stream(text, 3);
      const last = steps.at(-1) as StreamBlock[];
      expect(joined(last)).toBe(text);
      expect(last.map((block) => [block.kind, block.lang])).toEqual([
        ["prose", ""],
        ["prose", ""],
        ["code", "ts"],
        ["prose", ""],
      ]);
      expect(last[2]?.chunks.join("")).toBe("```ts\nconst a = 1;\n\nconst b = 2;\n```\n");
      expect(last.slice(0, 3).every((block) => block.closed)).toBe(true);
      expect(last[3]?.closed).toBe(false);
      // A closed block is the same object in every later step.
      const title = steps.find((blocks) => blocks[0]?.closed)?.[0];
      for (const blocks of steps.slice(steps.findIndex((each) => each[0] === title))) expect(blocks[0]).toBe(title);
      for (const blocks of steps) expect(text.startsWith(joined(blocks))).toBe(true);
    });
  });

  describe("given an unterminated fence", () => {
    it("should keep it one open code block to the end", () => {
      const blocks = stream("Look:\n\n```py\nprint(1)\n\nprint(2)\n", 5).at(-1) as StreamBlock[];
      expect(blocks.at(-1)).toMatchObject({ kind: "code", lang: "py", closed: false });
      expect(blocks.at(-1)?.chunks.join("")).toBe("```py\nprint(1)\n\nprint(2)\n");
    });
  });

  describe("given a 96 KB code reply of short lines", () => {
    it("should split the fence into finished chunks of 64 lines that keep their identity", () => {
      const lines = Array.from({ length: 3200 }, (_, index) => `  line_${index} = ${index};`);
      const text = `\`\`\`js\n${lines.join("\n")}\n\`\`\`\n`;
      const splitter = createStreamSplitter();
      let previous: StreamBlock[] = [];
      for (let end = 97; end < text.length + 97; end += 97) {
        const blocks = splitStream(splitter, text.slice(0, end));
        const before = previous.at(-1)?.chunks ?? [];
        const now = blocks.at(-1)?.chunks ?? [];
        for (let index = 0; index < before.length - 1; index += 1) expect(now[index]).toBe(before[index]);
        previous = blocks;
      }
      expect(previous).toHaveLength(1);
      expect(previous[0]?.chunks.length).toBe(Math.ceil(3202 / 64));
      expect(joined(previous)).toBe(text);
    });
  });

  describe("given a text that does not continue the last one", () => {
    it("should start over", () => {
      const splitter = createStreamSplitter();
      splitStream(splitter, "one\n\ntwo\n");
      expect(joined(splitStream(splitter, "other\n"))).toBe("other\n");
    });
  });
});

describe("StreamingText", () => {
  describe("when a reply of many paragraphs streams", () => {
    it("should render each closed block once, and the text exactly", () => {
      const text = Array.from({ length: 40 }, (_, index) => `Paragraph ${index} says something.`).join("\n\n");
      const calls = new Map<number, number>();
      const renderBlock = (block: StreamBlock) => {
        calls.set(block.start, (calls.get(block.start) ?? 0) + 1);
        return <p data-start={block.start}>{block.chunks.join("")}</p>;
      };
      const view = render(<StreamingText text={text.slice(0, 7)} renderBlock={renderBlock} />);
      for (let end = 14; end < text.length + 7; end += 7) {
        view.rerender(<StreamingText text={text.slice(0, end)} renderBlock={renderBlock} />);
      }
      expect(view.container.textContent).toBe(text);
      const starts = [...calls.keys()].sort((a, b) => a - b);
      expect(starts).toHaveLength(40);
      // Every block but the last was rendered while open (once per delta it grew by) and then once closed, never again.
      const paragraph = "Paragraph 10 says something.\n\n".length;
      for (const start of starts.slice(0, -1))
        expect(calls.get(start)).toBeLessThanOrEqual(Math.ceil(paragraph / 7) + 2);
    });
  });
});
