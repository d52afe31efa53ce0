import { type ChildProcess, spawn } from "node:child_process";
import { access, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ChatStoreLockedError } from "../errors.js";
import { createFileChatStore } from "./file-store.node.js";
import { lockFileName } from "./folder-lock.node.js";

// The child runs the real store from source through tsx: Node 20 cannot import TypeScript by itself.
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const holderScript = fileURLToPath(new URL("./testing/store-holder.ts", import.meta.url));

const roots: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function temporaryRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "conch-lock-"));
  roots.push(root);
  return root;
}

/** Starts a child process holding the store on `root`; resolves with its first line ("ready" or "refused …"). */
function startHolder(root: string, mode: "stay" | "exit") {
  const child = spawn(process.execPath, ["--conditions=source", "--import", tsxLoader, holderScript, root, mode], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const said = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.split("\n")[0] as string);
    });
    void exited.then(() => reject(new Error(`the holder ended without a word: ${stderr}`)));
  });
  return { child, said, exited };
}

describe("createFileChatStore, given a second process on the same folder", () => {
  it("should refuse it with ChatStoreLockedError naming the holder, and take over once the holder is killed", async () => {
    const root = await temporaryRoot();
    const holder = startHolder(root, "stay");
    expect(await holder.said).toBe("ready");
    const lock = JSON.parse(await readFile(join(root, lockFileName), "utf8")) as { pid: number };
    expect(lock.pid).toBe(holder.child.pid);

    const store = createFileChatStore({ root });
    const attempts = [
      () => store.readLog("held"),
      () => store.appendLog("held", [{ seq: 1, role: "user", parts: [{ type: "text", text: "mine" }] }]),
      () => store.readTranscript("held"),
    ];
    for (const attempt of attempts) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(ChatStoreLockedError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ root, lockPath: join(root, lockFileName), holderPid: holder.child.pid });
      expect((error as Error).message).toContain(`process ${holder.child.pid}`);
    }
    // Nothing was written by the refused store.
    expect((await readFile(join(root, "chats", "held.jsonl"), "utf8")).split("\n")).toHaveLength(2);

    holder.child.kill("SIGKILL");
    expect((await holder.exited).signal).toBe("SIGKILL");
    // The lock it left names a dead process: taken over.
    expect(await store.readLog("held")).toEqual([
      { seq: 0, role: "user", parts: [{ type: "text", text: `from ${holder.child.pid}` }] },
    ]);
    await store.appendLog("held", [{ seq: 1, role: "user", parts: [{ type: "text", text: "mine" }] }]);
    expect(JSON.parse(await readFile(join(root, lockFileName), "utf8"))).toMatchObject({ pid: process.pid });

    // Now this process holds it: a child is refused in its turn, and let in once this store lets go.
    const refused = startHolder(root, "exit");
    expect(await refused.said).toBe("refused ChatStoreLockedError");
    await store.close();
    await expect(access(join(root, lockFileName))).rejects.toMatchObject({ code: "ENOENT" });
    await refused.exited;
    const next = startHolder(root, "exit");
    expect(await next.said).toBe("ready");
    expect((await next.exited).code).toBe(0);
  }, 60_000);

  it("should leave no lock behind when the holder ends normally", async () => {
    const root = await temporaryRoot();
    const holder = startHolder(root, "exit");
    expect(await holder.said).toBe("ready");
    expect((await holder.exited).code).toBe(0);
    expect(await readdir(root)).not.toContain(lockFileName);
  }, 60_000);

  it("should share the lock among the stores of one process", async () => {
    const root = await temporaryRoot();
    const first = createFileChatStore({ root });
    const second = createFileChatStore({ root });
    await first.appendLog("c", [{ seq: 0, role: "user", parts: [{ type: "text", text: "one" }] }]);
    await second.appendLog("c", [{ seq: 1, role: "user", parts: [{ type: "text", text: "two" }] }]);
    await first.close();
    // The second still holds it.
    expect(await readdir(root)).toContain(lockFileName);
    await second.close();
    expect(await readdir(root)).not.toContain(lockFileName);
  });

  it("should refuse while a lock file it cannot read is there, and name it", async () => {
    const root = await temporaryRoot();
    await writeFile(join(root, lockFileName), "not a lock of ours");
    const error = await createFileChatStore({ root })
      .readLog("c")
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ChatStoreLockedError", holderPid: null, lockPath: join(root, lockFileName) });
  });
});
