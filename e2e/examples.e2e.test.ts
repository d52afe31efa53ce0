import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider } from "@conch/engine-client";
import { createRemoteEngine } from "@conch/engine-client/remote";
import { type FakeProvider, startFakeProvider } from "@conch/fake-provider";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleServer } from "../examples/node-server.js";
import { freePort, launchChromium, recordedDemoTurns, repoRoot, screenshotDir } from "./helpers.js";

const apiKey = "sk-example-0123456789-secret";

describe("examples/: the handler mounted in a Node server and as a Next.js route", () => {
  let fake: FakeProvider;
  let folder: string;
  beforeAll(async () => {
    fake = await startFakeProvider({ dialect: "openai", apiKey, reply: { text: "Hello from the example." } });
    folder = await mkdtemp(join(tmpdir(), "examples-"));
  });
  afterAll(async () => {
    await fake?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("node-server.ts should answer a remote engine's turn over HTTP, for a signed-in person only", async () => {
    const server = createExampleServer({
      provider: createProvider("openai", { baseURL: fake.baseURL, apiKey, local: false }),
      model: "fake-model",
      dataDir: join(folder, "node"),
      people: new Map([["token-of-me", "me"]]),
      apiKey,
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const baseURL = `http://127.0.0.1:${port}/api/engine`;
      expect((await fetch(`${baseURL}/capabilities`)).status).toBe(401);
      const engine = await createRemoteEngine({ baseURL, headers: { authorization: "Bearer token-of-me" } });
      const end = await engine.sendTurn({ chatId: "c1", seq: 0, text: "Hi" }).done;
      expect(end.status).toBe("done");
      const chat = await engine.loadChat("c1");
      expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
      expect((await engine.listChats()).chats.map((listed) => listed.id)).toEqual(["c1"]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("next-route.ts should export the handler for each method, answering web-standard Requests", async () => {
    process.env.ENGINE_TOKEN = "next-token-123";
    process.env.ENGINE_DATA_DIR = join(folder, "next");
    const route = await import("../examples/next-route.js");
    const authorized = { authorization: "Bearer next-token-123" };
    const capabilities = await route.GET(
      new Request("http://localhost/api/engine/capabilities", { headers: authorized }),
    );
    expect(await capabilities.json()).toMatchObject({ protocol: 1, context: true });
    const chat = await route.GET(new Request("http://localhost/api/engine/chats/new-one", { headers: authorized }));
    expect(((await chat.json()) as { snapshot: { messages: unknown[] } }).snapshot.messages).toEqual([]);
    const refused = await route.POST(new Request("http://localhost/api/engine/chats/x/turns", { method: "POST" }));
    expect(refused.status).toBe(401);
    expect(route.DELETE).toBe(route.GET);
  });
});

/**
 * Each chat example by the command its README gives for a clone: `pnpm example:…` builds its page from the
 * workspace's sources and serves it against the fake provider. A person's real turns are sent until a fold.
 */
const exampleCommands = [
  {
    script: "example:ai-sdk",
    userRows: '.message[data-message-role="user"]',
    // useChat's form shows Send again once the turn is over (Stop while it streams).
    ready: (page: Page) => page.getByRole("button", { name: "Send", exact: true }).waitFor({ timeout: 60_000 }),
  },
  {
    script: "example:assistant-ui",
    userRows: '.message[data-role="user"]',
    ready: (page: Page) =>
      expect.poll(() => page.locator(".thread-header").getAttribute("data-status"), { timeout: 60_000 }).toBe("ready"),
  },
] as const;

describe.each(exampleCommands)("pnpm $script, as the example's README says, in Chromium", (example) => {
  it("should serve a page that chats until a fold, its divider opening to the summary", {
    timeout: 300_000,
  }, async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), "example-command-"));
    // pnpm, then node: a process group of their own, ended together.
    const child = spawn("pnpm", ["run", example.script], {
      cwd: repoRoot,
      env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, OPENAI_BASE_URL: "", OPENAI_API_KEY: "" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += String(chunk);
    });
    child.stderr?.on("data", (chunk) => {
      output += String(chunk);
    });
    const browser = await launchChromium();
    try {
      await expect
        .poll(
          () => {
            if (child.exitCode !== null) throw new Error(`pnpm ${example.script} exited:\n${output}`);
            return output.includes(`listening on http://127.0.0.1:${port}`);
          },
          { timeout: 180_000, interval: 250 },
        )
        .toBe(true);
      const page = await browser.newPage({ viewport: { width: 1100, height: 860 } });
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      await page.goto(`http://127.0.0.1:${port}/`);
      const divider = page.locator("[data-nacre-summary-divider-trigger]");
      let sent = 0;
      for (const turn of recordedDemoTurns()) {
        await example.ready(page);
        const before = await page.locator(example.userRows).count();
        await page.getByRole("textbox", { name: "Message" }).fill(turn.person);
        await page.getByRole("button", { name: "Send", exact: true }).click();
        await expect.poll(() => page.locator(example.userRows).count(), { timeout: 60_000 }).toBe(before + 1);
        await example.ready(page);
        sent += 1;
        if ((await divider.count()) > 0 || sent === 8) break;
      }
      await expect.poll(() => divider.count(), { timeout: 60_000 }).toBe(1);
      await divider.click();
      await expect
        .poll(() => page.locator("[data-nacre-summary-divider-content]").textContent(), { timeout: 60_000 })
        .toMatch(/\w{3}/);
      await page.screenshot({ path: join(screenshotDir, `${example.script.replace(":", "-")}-fold.png`) });
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
      if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
