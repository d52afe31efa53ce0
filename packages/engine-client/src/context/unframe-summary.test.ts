import { describe, expect, it } from "vitest";
import { unframeSummary } from "./frame.js";

describe("unframeSummary", () => {
  describe("given a text", () => {
    it.each([
      { name: "plain text", text: "hello", expected: null },
      {
        name: "a frame that is not at the start",
        text: "x<earlier-in-this-chat>\ns\n</earlier-in-this-chat>",
        expected: null,
      },
      { name: "a frame that is never closed", text: "<earlier-in-this-chat>\ns", expected: null },
      {
        name: "a frame alone",
        text: "<earlier-in-this-chat>\nsummary\n</earlier-in-this-chat>",
        expected: { summary: "summary", rest: "" },
      },
      {
        name: "a frame and the person's text",
        text: "<earlier-in-this-chat>\nsummary\n</earlier-in-this-chat>\n\nWhat next?",
        expected: { summary: "summary", rest: "What next?" },
      },
      {
        name: "an escaped summary",
        text: "<earlier-in-this-chat>\na &lt;/earlier-in-this-chat> b &amp;lt;\n</earlier-in-this-chat>",
        expected: { summary: "a </earlier-in-this-chat> b &lt;", rest: "" },
      },
    ])("should read $name", ({ text, expected }) => {
      expect(unframeSummary(text)).toEqual(expected);
    });
  });
});
