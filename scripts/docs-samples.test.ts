// @vitest-environment jsdom
// Every TypeScript sample of README.md, docs/*.md and the examples' READMEs, read from the Markdown as it stands
// (never a copy): each is compiled with the repository's own settings; a fragment (its first lines say so) is
// compiled with a harness that declares the names it leaves to the reader; the whole samples are run, and the
// README's "Drop it into your chat" is rendered, chatted with until it folds, and its divider opened.
import "@testing-library/jest-dom/vitest";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { createElement, type FunctionComponent } from "react";
import ts from "typescript";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { repositoryRoot } from "./api-surface.js";
import { type CodeSample, codeSamples } from "./docs-check.js";

afterEach(cleanup);
// jsdom lacks these; cmdk (the README sample's CommandMenu) needs them.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};
Element.prototype.scrollIntoView ??= () => {};

/**
 * What each fragment leaves to the reader, declared so that the rest type-checks against the real packages. A
 * sample that is neither here nor whole fails the test below: a new sample gets its entry.
 */
const harnesses: Readonly<Record<string, string>> = {
  "README.md › Use it with assistant-ui": `
declare const engine: import("@conch/engine-client").Engine;
declare const chatId: string;
declare function Thread(): null;`,
  "README.md › Use it with the AI SDK": `
declare const engine: import("@conch/engine-client").Engine;
declare const runningTurns: import("@conch/engine-client/server").RunningTurns;
declare function sessionOf(request: Request): { userId: string };`,
  "README.md › Run the engine on a server": `
declare function engineOf(userId: string, model: string | undefined): import("@conch/engine-client").Engine;
declare function sessionOf(request: Request): { userId: string } | null;`,
  "docs/api.md › Errors": `
declare const provider: import("@conch/engine-client").ProviderAdapter;
declare const model: string;
declare const store: import("@conch/engine-client").ChatStore;
declare const tracker: { capture(error: unknown, details: { tags: Record<string, unknown> }): void };`,
  "docs/api.md › The API engine": `
declare const apiEngine: import("@conch/engine-client").ApiEngine;
declare const chatId: string;
declare const acpProgram: { prompt(text: string): Promise<unknown> };`,
  // The sample's folder is .artifacts/doc-samples: the repository's scripts are two folders up.
  "docs/real-server.md › Starting one": `
import { newlineToken, startLlamaServer } from "../../scripts/llama-server.js";`,
  "docs/deploy.md › Wiring it up": `
declare function authorize(request: Request): { userId: string } | null;
declare const provider: import("@conch/engine-client").ProviderAdapter;`,
  "docs/engine.md › The API engine, one turn at a time": `
declare const apiKey: string;`,
  // The interface as written must be the package's, both ways.
  "docs/transcript.md › The store interface": `
import type { ChatMessage, TranscriptFile, ChatStore as PackageChatStore } from "@conch/engine-client";
import type { ChatReading, ReadChatOptions } from "@conch/engine-client/kit";
import type { ChatDirectory } from "@conch/engine-client/server";
export const asWritten: ChatStore = {} as PackageChatStore;
export const asDeclared: PackageChatStore = {} as ChatStore;`,
  "docs/transcript.md › The chat directory": `
import type { ChatListPage, ChatDirectory as PackageChatDirectory } from "@conch/engine-client/server";
export const asWritten: ChatDirectory = {} as PackageChatDirectory;
export const asDeclared: PackageChatDirectory = {} as ChatDirectory;`,
  "docs/nacre.md › A chat list (`@conch/nacre/chats`)": `
declare const engine: import("@conch/engine-client").Engine;
declare const store: import("@conch/engine-client").IndexedDbChatStore;
declare const saved: string;
declare function save(chatId: string): void;`,
};

/** The whole samples, each run by a test below. */
const whole = [
  "README.md › Drop it into your chat",
  "docs/engine.md › The `compacted` event, read right",
  "docs/nacre.md › A message list, with Markdown",
  "docs/nacre.md › Versions: edit, regenerate, the picker (`@conch/nacre/branches`)",
  "docs/nacre.md › With assistant-ui",
  "docs/providers.md › The fake provider server (tests, `pnpm simulate`, `pnpm dev`)",
  "docs/transcript.md › A store of your own",
];

const samples = codeSamples();
// Inside the repository, so that the packages resolve as the tests' own imports do (git-ignored).
const folder = join(repositoryRoot, ".artifacts", "doc-samples");
rmSync(folder, { recursive: true, force: true });
mkdirSync(folder, { recursive: true });
afterAll(() => rmSync(folder, { recursive: true, force: true }));

// What a page's bundler gives every sample: `import "….css"` (Vite's client types, as the examples have).
const ambient = join(folder, "ambient.d.ts");
writeFileSync(ambient, '/// <reference types="vite/client" />\n');
const fileOf = new Map<CodeSample, string>();
for (const [index, sample] of samples.entries()) {
  const path = join(folder, `sample-${index}.${sample.lang}`);
  writeFileSync(path, `${sample.code}${harnesses[sample.id] ?? ""}\n`);
  fileOf.set(sample, path);
}
const byId = (id: string) => {
  const sample = samples.find((candidate) => candidate.id === id);
  if (!sample) throw new Error(`No sample "${id}" in the docs any more`);
  return sample;
};
const load = (id: string) => import(/* @vite-ignore */ pathToFileURL(fileOf.get(byId(id)) as string).href);

describe("the docs' TypeScript samples, read from the Markdown", () => {
  it("should know every sample: a fragment says so and has a harness, anything else is run whole", () => {
    const found = samples.map((sample) => [sample.id, sample.fragment ? "fragment" : "whole"]);
    const expected = samples.map((sample) => [
      sample.id,
      sample.id in harnesses ? "fragment" : whole.includes(sample.id) ? "whole" : "neither: add it to this test",
    ]);
    expect(found).toEqual(expected);
    expect(samples.length).toBe(Object.keys(harnesses).length + whole.length);
  });

  // One TypeScript program over the samples and all they import: seconds on an idle machine, minutes on a loaded one.
  it("should compile every sample, fragments in their harness, with the repository's settings", () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(repositoryRoot, "tsconfig.check.json"),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
        },
      },
    );
    if (!config) throw new Error("tsconfig.check.json could not be read");
    const program = ts.createProgram([ambient, ...fileOf.values()], config.options);
    const errors = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const sample = samples.find((candidate) => fileOf.get(candidate) === diagnostic.file?.fileName);
      const where = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      // The line in the Markdown file: the fence's line, plus the line inside the block.
      const at = sample && where ? `${sample.file}:${sample.line + where.line + 1}` : diagnostic.file?.fileName;
      return `${at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
    });
    expect(errors).toEqual([]);
  }, 600_000);

  it("README.md's Drop it into your chat should render, send, fold and open the divider to its summary", async () => {
    const { Chat } = (await load("README.md › Drop it into your chat")) as {
      Chat: FunctionComponent<{ chatId: string; onNewChat: (message: string) => void }>;
    };
    const user = userEvent.setup();
    render(createElement(Chat, { chatId: "readme", onNewChat: () => {} }));
    const composer = await screen.findByRole("textbox", { name: "Message" });

    await user.type(composer, "Hi{Enter}");
    await screen.findByText(/assistant: Hello!/);
    expect(document.querySelector("[data-nacre-summary-divider]")).toBeNull();

    await user.type(composer, "Hi again{Enter}");
    await screen.findByText(/assistant: Hi again\./);
    // The divider stands right before the first kept message: the second turn, seq 2.
    const trigger = await screen.findByRole("button", { name: /Earlier messages are summarised/ });
    expect(trigger.closest("li")?.textContent).toContain("user: Hi again");
    await user.click(trigger);
    await waitFor(() => expect(trigger).toHaveAttribute("aria-expanded", "true"));
    expect(document.querySelector("[data-nacre-summary-divider-content]")).toHaveTextContent("They said hi.");
  });

  it("docs/engine.md's compacted event should load as written, its text the bare summary the engine sends", async () => {
    await expect(load("docs/engine.md › The `compacted` event, read right")).resolves.toBeDefined();
    const sample = samples.find((candidate) => candidate.id === "docs/engine.md › The `compacted` event, read right");
    expect(/\btext: "([^"]*)"/.exec(sample?.code ?? "")?.[1]).toMatch(/^(?!<earlier-in-this-chat>)\S/);
  });

  it("docs/transcript.md's store of your own should read a branched chat's tree and leaf, and carry the API engine's edit", async () => {
    const [{ createRowStore }, { createApiEngine, createProvider }, { startFakeProvider }] = await Promise.all([
      load("docs/transcript.md › A store of your own") as Promise<{
        createRowStore: () => import("@conch/engine-client").ChatStore;
      }>,
      import("@conch/engine-client"),
      import("@conch/fake-provider"),
    ]);
    const store = createRowStore();
    const server = await startFakeProvider({
      dialect: "openai",
      row: "openrouter",
      models: [{ id: "chat", window: 32_000 }],
      reply: (request) => ({ text: `About ${request.lastUserText}` }),
    });
    try {
      const provider = createProvider("openrouter", { baseURL: server.baseURL, local: false });
      const engine = createApiEngine({ provider, model: "chat", store, foldAhead: false });
      for (const [seq, text, parent] of [
        [0, "one", undefined],
        [2, "two", undefined],
        [4, "two, edited", 1],
      ] as const) {
        const end = await engine.sendTurn({ chatId: "own", seq, text, ...(parent === undefined ? {} : { parent }) })
          .done;
        expect(end.status).toBe("done");
      }
      const active = await store.readChat("own", { page: { limit: 10 } });
      expect(active.tree.forks).toEqual([{ seq: 4, parent: 1, role: "user" }]);
      expect(active.leaf).toBe(5);
      expect(active.page.map((message) => message.seq)).toEqual([0, 1, 4, 5]);
      const first = await store.readChat("own", { branch: 2, page: { limit: 10 } });
      expect(first.leaf).toBe(3);
      expect(first.page.map((message) => message.seq)).toEqual([0, 1, 2, 3]);
      // Another engine over the store reads the same: the edited branch active, the first a version away.
      const again = createApiEngine({ provider, model: "chat", store, foldAhead: false });
      const chat = await again.loadChat("own");
      expect(chat.messages.map((message) => [message.seq, message.siblings ?? null])).toEqual([
        [0, null],
        [1, null],
        [4, [2, 4]],
        [5, null],
      ]);
    } finally {
      await server.close();
    }
  });

  it("docs/nacre.md's message list should render the chat's messages, Markdown as Markdown", async () => {
    const [{ ChatColumn }, { createMockEngine }] = await Promise.all([
      load("docs/nacre.md › A message list, with Markdown") as Promise<{
        ChatColumn: FunctionComponent<{ engine: import("@conch/engine-client").Engine; chatId: string }>;
      }>,
      import("@conch/engine-client/mock"),
    ]);
    const engine = createMockEngine({ turns: [{ reply: "Some **bold** words." }] });
    const user = userEvent.setup();
    render(createElement(ChatColumn, { engine, chatId: "list" }));
    await user.type(await screen.findByRole("textbox", { name: "Message" }), "Hi{Enter}");
    const bold = await screen.findByText("bold");
    expect(bold.tagName).toBe("STRONG");
    expect(screen.getByRole("region", { name: "Messages" })).toHaveAttribute("data-nacre-message-list");
  });

  it("docs/nacre.md's assistant-ui thread should render inside a ConversationProvider", async () => {
    const [{ Thread }, { ConversationProvider }, { createMockEngine }] = await Promise.all([
      load("docs/nacre.md › With assistant-ui") as Promise<{ Thread: FunctionComponent }>,
      import("@conch/nacre"),
      import("@conch/engine-client/mock"),
    ]);
    render(
      createElement(ConversationProvider, { engine: createMockEngine({}), chatId: "thread" }, createElement(Thread)),
    );
    await waitFor(() => expect(document.querySelector("[data-nacre-context-meter]")).not.toBeNull());
  });

  it("docs/providers.md's fake provider sample should run against the real server", async () => {
    await load("docs/providers.md › The fake provider server (tests, `pnpm simulate`, `pnpm dev`)");
  });
});
