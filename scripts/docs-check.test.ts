import { describe, expect, it } from "vitest";
import { anchorsOf, checkDocs, checkDocument, knownExports, tableCells } from "./docs-check.js";

const known = knownExports();
/** A planted page in docs/, so that its relative links resolve from there. */
const check = (text: string) => checkDocument("docs/planted.md", text, known);

describe("the docs check (scripts/docs-check.ts)", () => {
  it("given the repository's README.md, docs/*.md and the examples' READMEs, should find no problem", () => {
    expect(checkDocs().map((problem) => `${problem.file}:${problem.line} ${problem.message}`)).toEqual([]);
  });

  describe("given a planted broken table", () => {
    it("should report the row an unescaped `|` in backticks split, with its line", () => {
      const text = [
        "# Parts",
        "",
        "| part | attributes |",
        "| ---- | ---------- |",
        '| `SummaryDivider.Root` | `data-state="open|closed"` |',
        '| `ContextMeter.Root` | `data-source="estimate\\|provider"` |',
      ].join("\n");
      expect(check(text)).toEqual([
        expect.objectContaining({ line: 5, rule: "table-cells", message: expect.stringContaining("3 cells") }),
      ]);
    });

    it("should read an escaped `\\|` as part of its cell, and leave tables in code blocks alone", () => {
      expect(tableCells("| a | `x\\|y` | c |")).toEqual(["a", "`x\\|y`", "c"]);
      expect(check(["```md", "| a | b |", "| - | - |", "| 1 | 2 | 3 |", "```"].join("\n"))).toEqual([]);
    });
  });

  describe("given a planted name no entry point exports", () => {
    it("should report a component, a factory and a hook, and accept the real ones", () => {
      const text = [
        "Wrap it in `ConversationProvider`, put `SummaryDivider.Root` before the message and call",
        "`createApiEngine({ provider })`, `useConversation()` and `ContextMeter.Root`.",
        "Then `createMissingThing()`, `useNothing()` and `SummaryDivider.Gone` and `NoSuchPart`.",
      ].join("\n");
      expect(check(text).map((problem) => [problem.line, problem.rule, problem.message])).toEqual([
        [3, "unknown-name", "`createMissingThing` is not exported by any entry point"],
        [3, "unknown-name", "`useNothing` is not exported by any entry point"],
        [3, "unknown-name", "`SummaryDivider.Gone` is not exported by any entry point"],
        [3, "unknown-name", "`NoSuchPart` is not exported by any entry point"],
      ]);
    });

    it("should report an entry point that no package has, and accept the real ones", () => {
      const text = "From `@conch/engine-client/ai-sdk`, `@conch/nacre/command` and `@conch/engine-client/test`.";
      expect(check(text)).toEqual([
        expect.objectContaining({ rule: "unknown-entry", message: expect.stringContaining("engine-client/test") }),
      ]);
    });

    it("should accept other libraries' names and leave names in code blocks alone", () => {
      const text = ["`useChat` with `DefaultChatTransport`, in `StrictMode`.", "```ts", "createGone();", "```"];
      expect(check(text.join("\n"))).toEqual([]);
    });
  });

  describe("given a planted dead link", () => {
    it("should report a missing file and a missing heading, and accept live ones", () => {
      const text = [
        "See [the API](api.md), [the README](../README.md#drop-it-into-your-chat) and [here](#parts).",
        "## Parts",
        "But [gone](missing.md), [no such heading](api.md#no-such-heading) and ![a picture](images/none.png).",
        "And [the web](https://example.com/x.md) is not checked.",
      ].join("\n");
      expect(check(text).map((problem) => [problem.line, problem.rule, problem.message])).toEqual([
        [3, "dead-link", "missing.md: no file docs/missing.md"],
        [3, "dead-link", "api.md#no-such-heading: no heading #no-such-heading in docs/api.md"],
        [3, "dead-link", "images/none.png: no file docs/images/none.png"],
      ]);
    });

    it("should make anchors as GitHub does: lower case, punctuation dropped, repeats numbered", () => {
      expect([...anchorsOf("## Use it with `useChat` (AI SDK)\n## Set up\n## Set up")]).toEqual([
        "use-it-with-usechat-ai-sdk",
        "set-up",
        "set-up-1",
      ]);
    });
  });
});
