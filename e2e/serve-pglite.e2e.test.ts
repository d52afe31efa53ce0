// `pnpm serve` without DATABASE_URL: chats in PGlite under NACRE_DATA_DIR, a file-store folder imported on the first
// start, one process per folder, chats kept across restarts and a SIGKILL.
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildTranscriptFile, type ChatMessage } from "@conch/engine-client";
import { createFileChatStore } from "@conch/engine-client/node";
import type { WireChatList, WireChatPage } from "@conch/engine-client/remote";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoFakeProvider, startDemoFakeProvider } from "../dev/api/fake-provider.js";
import { type ServeProcess, serveRefusal, startServe } from "./serve-helpers.js";

const api = "/api/engine";

const said = (seq: number, text: string): ChatMessage => ({
  seq,
  role: seq % 2 === 0 ? "user" : "assistant",
  parts: [{ type: "text", text }],
  createdAt: 1_750_000_000_000 + seq,
});

describe("pnpm serve on PGlite under NACRE_DATA_DIR", () => {
  let fake: DemoFakeProvider;
  let dataDir: string;
  let env: Record<string, string>;
  const serves: ServeProcess[] = [];
  const log = [
    said(0, "Plan three days in Lisbon.\nWe like trams."),
    said(1, "Day one: Alfama and the 28 tram."),
    said(2, "And day two?"),
    said(3, "Belém: the tower and the pastries."),
  ];

  beforeAll(async () => {
    fake = await startDemoFakeProvider({ dialect: "openrouter", chunkDelayMs: 2 });
    dataDir = await mkdtemp(join(tmpdir(), "nacre-serve-pglite-"));
    // What the file store of an earlier `pnpm serve` left: one person's folder with a chat and its transcript.
    const files = createFileChatStore({ root: join(dataDir, "people", "local") });
    await files.appendLog("lisbon", log);
    await files.writeTranscript("lisbon", buildTranscriptFile({ id: "lisbon", kept: log, factor: 1.1 }));
    // That server has stopped: let go of the folder (a file store is one process's at a time).
    await files.close();
    env = {
      NACRE_PROVIDER: "openrouter",
      NACRE_BASE_URL: fake.server.baseURL,
      NACRE_MODEL: "chat-8k",
      NACRE_CHEAP_MODEL: "cheap",
      NACRE_DATA_DIR: dataDir,
      DATABASE_URL: "",
    };
  }, 120_000);

  afterAll(async () => {
    await Promise.all(serves.map((serve) => serve.stop()));
    await fake?.server.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("should import the file store's chats on the first start and keep its files, renamed, unused", async () => {
    const serve = await startServe(env, ["--no-build"]);
    serves.push(serve);
    expect(serve.output()).toContain("imported 1 chats of the file store into PGlite");
    const entries = await readdir(dataDir);
    expect(entries).not.toContain("people");
    const kept = entries.find((name) => name.startsWith("people.imported-")) as string;
    expect(kept).toBeDefined();
    const keptLog = await readFile(join(dataDir, kept, "local", "chats", "lisbon.jsonl"), "utf8");
    expect(keptLog.trim().split("\n")).toHaveLength(4);

    const list = (await (await fetch(`${serve.url}${api}/chats`)).json()) as WireChatList;
    expect(list.chats.map(({ id, title }) => ({ id, title }))).toEqual([
      { id: "lisbon", title: "Plan three days in Lisbon." },
    ]);
    const page = (await (await fetch(`${serve.url}${api}/chats/lisbon`)).json()) as WireChatPage;
    expect(page.snapshot.messages).toEqual(log);

    // A second process on the same folder is refused: two would overwrite each other's pages.
    const refused = await serveRefusal(env, ["--no-build", "--port", "0"]);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/is in use by process \d+/);

    const turn = await fetch(`${serve.url}${api}/chats/lisbon/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ seq: 4, text: "And day three?" }),
    });
    expect(turn.status).toBe(200);
    expect(await turn.text()).toContain('"type":"turn-end"');
    await serve.stop();
    expect(existsSync(join(dataDir, "store.lock"))).toBe(false);
  }, 300_000);

  it("should find the chat as it was after a restart, and import nothing again", async () => {
    const serve = await startServe(env, ["--no-build"]);
    serves.push(serve);
    expect(serve.output()).not.toContain("imported");
    const page = (await (await fetch(`${serve.url}${api}/chats/lisbon`)).json()) as WireChatPage;
    expect(page.snapshot.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(page.snapshot.messages.slice(0, 4)).toEqual(log);
    expect(page.snapshot.messages[4]?.parts).toEqual([{ type: "text", text: "And day three?" }]);
  }, 300_000);

  it("should keep a finished turn through a SIGKILL, and start again on the folder the killed one locked", async () => {
    const serve = serves.at(-1) as ServeProcess;
    const turn = await fetch(`${serve.url}${api}/chats/lisbon/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ seq: 6, text: "Where do we eat?" }),
    });
    expect(await turn.text()).toContain('"type":"turn-end"');
    await serve.kill();
    expect(existsSync(join(dataDir, "store.lock"))).toBe(true);
    const again = await startServe(env, ["--no-build"]);
    serves.push(again);
    const page = (await (await fetch(`${again.url}${api}/chats/lisbon`)).json()) as WireChatPage;
    expect(page.snapshot.messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(page.snapshot.messages[6]?.parts).toEqual([{ type: "text", text: "Where do we eat?" }]);
  }, 300_000);
});
