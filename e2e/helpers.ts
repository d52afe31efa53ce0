import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConversationFile, type RecordedTurn, recordedTurns } from "@conch/fake-provider";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { recordedConversation } from "../dev/api/fake-provider.js";
import { chromiumArgs, chromiumPath } from "../scripts/chromium.js";
import { freePort } from "../scripts/free-port.mjs";

export const repoRoot = fileURLToPath(new URL("..", import.meta.url));
export { freePort };

export const screenshotDir = join(repoRoot, ".artifacts", "screenshots");

/** A page server started as a child process, up once its URL answers. */
export interface StartedPageServer {
  readonly url: string;
  /** Everything it printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node <nodeArgs>` in the repository (a dev server, `pnpm dev:local`) given a free `port` to listen on, and
 * waits until `http://127.0.0.1:<port>/` answers 200: it fails with the child's output when the child exits first or
 * is not up within `timeoutMs`.
 */
export async function startPageServer(
  label: string,
  nodeArgs: (port: number) => readonly string[],
  options: { readonly env?: Record<string, string>; readonly timeoutMs?: number } = {},
): Promise<StartedPageServer> {
  const port = await freePort();
  const timeoutMs = options.timeoutMs ?? 60_000;
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs(port)], {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${label} exited early:\n${output}`);
    const up = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${label} was not up within ${timeoutMs / 1000} s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Starts a Vite dev server from a config file (as `pnpm dev:mock` does), on a free port. */
export function startVite(configFile: string, extraEnv: Record<string, string> = {}): Promise<StartedPageServer> {
  const require = createRequire(import.meta.url);
  const viteBin = join(dirname(require.resolve("vite/package.json")), "bin", "vite.js");
  // As `pnpm dev` runs it: the config's plugins import the workspace packages by name, and Node (which loads a
  // config natively) reads their sources only under the "source" condition, with tsx for the TypeScript.
  return startPageServer(
    "vite",
    (port) => [
      "--conditions=source",
      "--import",
      "tsx",
      viteBin,
      "--configLoader",
      "native",
      "--config",
      configFile,
      "--port",
      String(port),
    ],
    { env: extraEnv },
  );
}

/** Debian's Chromium, headless, without background network calls (the machine's network is closed). */
export function launchChromium(): Promise<Browser> {
  mkdirSync(screenshotDir, { recursive: true });
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: [...chromiumArgs] });
}

/**
 * The chat steps both dev pages' tests take: the composer, the messages, the summary line, and sending a
 * message then waiting until its turn is over. `page` is read at each step (it is opened in `beforeAll`).
 */
export function chatSteps(page: () => Page, patient: { readonly timeout: number }) {
  const composer = () => page().getByRole("textbox", { name: "Message" });
  const userMessages = () => page().locator('[data-nacre-message][data-role="user"]');
  const dividerLine = () => page().locator("[data-nacre-summary-divider-trigger]");
  /** Waits until the summary's opening animation has finished (for the screenshots). */
  const summaryOpened = () =>
    page()
      .locator("[data-nacre-summary-divider-content]")
      .evaluate((node) => Promise.all(node.getAnimations().map((animation) => animation.finished)).then(() => true));

  /** The page is ready for the next message: loaded, not busy, nothing streaming. */
  async function waitUntilReady() {
    await composer().waitFor(patient);
    await expect.poll(() => page().locator("[data-nacre-composer][data-busy]").count(), patient).toBe(0);
    await expect.poll(() => page().locator("[data-streaming]").count(), patient).toBe(0);
  }

  /**
   * A fold ahead of the need runs after a turn and is heard live: the line says it is summarising until the fold
   * ends (with a summary, or none when it was skipped). Waits until it no longer does.
   */
  async function waitUntilFoldSettled() {
    await expect
      .poll(() => page().locator('[data-nacre-summary-divider][data-status="summarising"]').count(), patient)
      .toBe(0);
  }

  /** Types (or pastes) a message and waits until its turn is over. */
  async function sendAndWait(text: string) {
    await waitUntilReady();
    const before = await userMessages().count();
    await composer().fill(text);
    await composer().press("Enter");
    await expect.poll(() => userMessages().count(), patient).toBe(before + 1);
    await waitUntilReady();
  }

  /**
   * The last reply is marked cut off (`data-nacre-cut-off`, "Cut off" under it); Continue sends a new turn, which
   * is answered in full, and no Continue is left.
   */
  async function continueCutOff() {
    const cutOff = page().locator('[data-nacre-message][data-role="assistant"]').last();
    await expect.poll(() => cutOff.getAttribute("data-nacre-cut-off"), patient).toBe("");
    expect(await cutOff.locator("[data-nacre-message-ending]").textContent()).toBe("Cut off");
    const users = await userMessages().count();
    await page().locator("[data-nacre-continue]").click();
    await expect.poll(() => userMessages().count(), patient).toBe(users + 1);
    await waitUntilReady();
    expect(await page().locator("[data-nacre-continue]").count()).toBe(0);
    const answer = page().locator('[data-nacre-message][data-role="assistant"]').last();
    expect(await answer.getAttribute("data-nacre-cut-off")).toBeNull();
  }

  return {
    composer,
    userMessages,
    dividerLine,
    summaryOpened,
    waitUntilReady,
    waitUntilFoldSettled,
    sendAndWait,
    continueCutOff,
  };
}

/**
 * Text reduced to its words, so that a message compares the same in full (Markdown rendered, a role label) and as
 * its plain-text placeholder (Markdown as typed).
 */
export function wordsOf(text: string): string {
  return text.replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/** Each message row in the page: its seq, role, whether it is a placeholder, and its text. */
export function messageRows(page: Page) {
  return page.locator("[data-nacre-message]").evaluateAll((rows) =>
    rows.map((row) => ({
      seq: row.getAttribute("data-seq"),
      role: row.getAttribute("data-role"),
      placeholder: row.hasAttribute("data-placeholder"),
      text: row.textContent ?? "",
    })),
  );
}

/** The turns of the demo's recorded chat that the person typed something in, in order: what the tests paste. */
export function recordedDemoTurns(): RecordedTurn[] {
  const conversation = loadConversationFile(recordedConversation.file).find(
    (candidate) => candidate.id === recordedConversation.id,
  );
  if (!conversation) throw new Error(`No ${recordedConversation.id} in ${recordedConversation.file}`);
  return recordedTurns(conversation.messages).filter((turn) => turn.person.trim() !== "");
}
