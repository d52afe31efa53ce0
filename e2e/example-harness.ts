// The examples' e2e tests' one set-up (examples/ai-sdk-chat and examples/assistant-ui-chat, their own tests and
// their versions tests): the demo's fake provider, the example's Node server over it, Chromium on its page, and
// the loop that sends the recorded turns until the chat has folded.
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider } from "@conch/engine-client";
import type { Browser, Page } from "playwright-core";
import { build, defaultClientConditions } from "vite";
import {
  type DemoFakeProvider,
  firstChatModel,
  loadSharedConversations,
  startDemoFakeProvider,
  summariserModel,
} from "../dev/api/fake-provider.js";
import { conversationsDir } from "../dev/transcript-plugin.js";
import { createAiSdkChatServer } from "../examples/ai-sdk-chat/server.js";
import { createChatServer } from "../examples/assistant-ui-chat/server.js";
import { launchChromium, repoRoot } from "./helpers.js";

export type ExampleName = "ai-sdk-chat" | "assistant-ui-chat";

export interface ExampleOptions {
  /** The example server's `foldAhead` (its own default when absent). */
  readonly foldAhead?: boolean;
  /** The fake provider's delay between chunks (the demo's when absent). */
  readonly chunkDelayMs?: number;
  /** Where the page is opened, after the server's URL (`?chat=versions`); the page's root when absent. */
  readonly path?: string;
}

/** An example running over the demo's fake provider, its page open in Chromium. */
export interface ExampleInChromium {
  readonly fake: DemoFakeProvider;
  /** The example server's URL, with its trailing slash. */
  readonly url: string;
  readonly browser: Browser;
  /** The page, 1100 × 860, opened at `url` + `path`. */
  readonly page: Page;
  /** Every error thrown in the page; a test's other tabs add theirs here too. */
  readonly pageErrors: string[];
  /** Closes Chromium, the server and the fake provider, and removes the example's folder. */
  close(): Promise<void>;
}

/** The example's Node server, listening on a free port of 127.0.0.1, and how to close it. */
async function startExampleServer(
  example: ExampleName,
  provider: ReturnType<typeof createProvider>,
  folder: string,
  foldAheadOption: boolean | undefined,
): Promise<{ readonly server: Server; close(): Promise<void> }> {
  const dataDir = join(folder, "chats");
  const foldAhead = foldAheadOption === undefined ? {} : { foldAhead: foldAheadOption };
  if (example === "ai-sdk-chat") {
    const chat = await createAiSdkChatServer({ provider, model: firstChatModel, dataDir, ...foldAhead });
    return { server: chat.server, close: () => chat.close() };
  }
  const pageDir = join(folder, "page");
  // Built as `npm run build` does, from the workspace's sources.
  await build({
    configFile: join(repoRoot, "examples/assistant-ui-chat/vite.config.ts"),
    resolve: { conditions: ["source", ...defaultClientConditions] },
    build: { outDir: pageDir, emptyOutDir: true, reportCompressedSize: false },
    logLevel: "warn",
  });
  const server = createChatServer({ provider, model: firstChatModel, dataDir, pageDir, ...foldAhead });
  return { server, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * Starts `example`'s Node server over the demo's fake provider (OpenRouter's dialect, the shared recorded
 * conversations): its chats in a fresh temporary folder, its page open in Chromium. What started is closed again
 * when a later step fails.
 */
export async function startExampleInChromium(
  example: ExampleName,
  options: ExampleOptions = {},
): Promise<ExampleInChromium> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const folder = await mkdtemp(join(tmpdir(), `${example}-`));
    closers.push(() => rm(folder, { recursive: true, force: true }));
    const fake = await startDemoFakeProvider({
      dialect: "openrouter",
      conversations: loadSharedConversations(conversationsDir(repoRoot)),
      ...(options.chunkDelayMs === undefined ? {} : { chunkDelayMs: options.chunkDelayMs }),
    });
    closers.push(() => fake.server.close());
    const provider = createProvider("openrouter", {
      baseURL: fake.server.baseURL,
      local: false,
      cheapestModel: summariserModel,
    });
    const started = await startExampleServer(example, provider, folder, options.foldAhead);
    closers.push(() => started.close());
    await new Promise<void>((resolve) => started.server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(started.server.address() as AddressInfo).port}/`;
    const browser = await launchChromium();
    closers.push(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1100, height: 860 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${url}${options.path ?? ""}`);
    return { fake, url, browser, page, pageErrors, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Sends `turns` one by one with `send` (which waits until each turn is over), at most `most` of them (the turns
 * again and again when more than there are), until `folded()` says so after a turn. Returns the texts sent.
 */
export async function sendUntilFolded<Turn>(
  turns: readonly Turn[],
  send: (turn: Turn) => Promise<void>,
  folded: () => boolean | Promise<boolean>,
  most = turns.length,
): Promise<Turn[]> {
  const sent: Turn[] = [];
  for (let index = 0; index < most && turns.length > 0; index++) {
    const turn = turns[index % turns.length] as Turn;
    await send(turn);
    sent.push(turn);
    if (await folded()) break;
  }
  return sent;
}

/**
 * How many folds the chat model's requests have shown so far: each new summary in the last request the fake
 * provider answered is one more. Read it after each turn.
 */
export function foldsSeen(fake: DemoFakeProvider): () => number {
  const summaries: string[] = [];
  return () => {
    const summary = fake.lastRequest()?.summary ?? null;
    if (summary !== null && summary !== summaries.at(-1)) summaries.push(summary);
    return summaries.length;
  };
}
