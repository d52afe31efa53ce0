import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, stat, watch } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { isAbortError } from "../errors.js";
import { createFileChatStore } from "./file-store.node.js";
import { createMemoryChatStore } from "./memory-store.js";
import { bigTranscript } from "./testing/fixtures.js";

// The child runs the real store from source through tsx: Node 20 cannot import TypeScript by itself.
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const writerScript = fileURLToPath(new URL("./testing/crash-writer.ts", import.meta.url));

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

/** How far a write has gone when the writer is killed. */
type KillPoint =
  | { readonly stage: "partial"; readonly atLeast: number }
  | { readonly stage: "complete"; readonly fullSizes: readonly number[] };

/**
 * Starts the writer (the real store in a child process, replacing one transcript over and over) and SIGKILLs it
 * in the middle of a write. On every change to a temporary file the child is stopped (SIGSTOP) and the file
 * measured: if it has reached the kill point and is not renamed yet, the child is killed, else it goes on
 * (SIGCONT). Event-driven, with no clock. Returns the temporary file the killed write left, with its size.
 */
async function killWriterMidWrite(root: string, point: KillPoint): Promise<{ name: string; size: number }[]> {
  const folder = join(root, "api-sessions");
  const before = new Set(await readdir(folder));
  const child = spawn(process.execPath, ["--conditions=source", "--import", tsxLoader, writerScript, root], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, signal) => resolve(signal)),
  );
  const watching = new AbortController();
  void exited.then(() => watching.abort());

  let left: { name: string; size: number }[] = [];
  try {
    for await (const event of watch(folder, { signal: watching.signal })) {
      if (!event.filename?.includes(".tmp-") || before.has(event.filename)) continue;
      child.kill("SIGSTOP");
      left = [];
      for (const name of await readdir(folder)) {
        if (!name.includes(".tmp-") || before.has(name)) continue;
        const size = await stat(join(folder, name)).then(
          (stats) => stats.size,
          () => -1,
        );
        if (size >= 0) left.push({ name, size });
      }
      const reached = left.some(({ size }) =>
        point.stage === "partial" ? size >= point.atLeast : point.fullSizes.includes(size),
      );
      if (reached) {
        child.kill("SIGKILL");
        break;
      }
      child.kill("SIGCONT");
    }
  } catch (error) {
    if (!isAbortError(error)) throw error;
  }
  expect(await exited, `the writer should only end when killed; it said: ${stderr}`).toBe("SIGKILL");
  return left;
}

describe("createFileChatStore, given a process killed while it replaces a transcript", () => {
  it("should leave the old or the new transcript whole, and its temporary file removed by the next process", async () => {
    const root = await mkdtemp(join(tmpdir(), "conch-crash-"));
    roots.push(root);
    const contents = new Map([
      ["old", bigTranscript("crash", "old", 3)],
      ["new", bigTranscript("crash", "new", 5)],
    ]);
    // The sizes the two contents have on disk, measured by the memory store, which sizes them as a file would.
    const sizer = createMemoryChatStore();
    const fullSizes: number[] = [];
    for (const content of contents.values()) {
      await sizer.writeTranscript("crash", content);
      fullSizes.push(await sizer.transcriptBytes("crash"));
    }
    const first = createFileChatStore({ root });
    await first.writeTranscript("crash", contents.get("old")!);
    // One process at a time holds the folder: the writer child takes it once this one lets go.
    await first.close();

    const points: KillPoint[] = [
      { stage: "partial", atLeast: 1 },
      { stage: "partial", atLeast: 2 * 1024 * 1024 },
      { stage: "complete", fullSizes },
    ];
    for (const point of points) {
      const left = await killWriterMidWrite(root, point);
      expect(left, `the kill should land while a temporary file is being written (${point.stage})`).toHaveLength(1);
      if (point.stage === "partial") expect(fullSizes).not.toContain(left[0]?.size);

      // The killed writer's lock is stale: taken over, and the temporary file it left is removed.
      const store = createFileChatStore({ root });
      const read = await store.readTranscript("crash");
      const label = String(read?.readUntil);
      expect(["old", "new"]).toContain(label);
      expect(read).toEqual(contents.get(label));
      const bytes = await store.transcriptBytes("crash");
      expect(bytes).toBe((await stat(store.transcriptPath("crash"))).size);
      expect(fullSizes).toContain(bytes);
      expect(await readdir(join(root, "api-sessions"))).toEqual(["crash.json"]);
      await store.close();
    }

    // The chat goes on: the next write replaces the transcript as usual.
    const store = createFileChatStore({ root });
    await store.writeTranscript("crash", contents.get("new")!);
    expect(await store.readTranscript("crash")).toEqual(contents.get("new"));
  });
});
