import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createFileChatStore } from "./file-store.node.js";
import { createMemoryChatStore } from "./memory-store.js";
import { chatStoreContract } from "./testing/chat-store-contract.js";

// The shared store contract (testing/chat-store-contract.ts) on the stores that run in Node; IndexedDB runs it in
// Chromium (indexeddb-store.browser.test.ts), PGlite and Postgres in postgres/postgres-store.test.ts.
const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

chatStoreContract("memory", async () => createMemoryChatStore());

chatStoreContract(
  "file system",
  async () => {
    const root = await mkdtemp(join(tmpdir(), "conch-store-"));
    roots.push(root);
    return createFileChatStore({ root });
  },
  // Another store object on the same folder: a restarted process.
  { reopen: async () => createFileChatStore({ root: roots.at(-1) as string }) },
);
