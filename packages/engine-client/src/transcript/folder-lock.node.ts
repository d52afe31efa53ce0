import { randomBytes } from "node:crypto";
import { unlinkSync } from "node:fs";
import { link, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { ChatStoreLockedError } from "../errors.js";
import { errorCode } from "./durable-files.node.js";

/** The lock file of a file-store folder, beside `api-sessions/` and `chats/`. */
export const lockFileName = "store.lock";

/** This process's hold on a folder; `release` is safe to call more than once. */
export interface FolderLock {
  release(): Promise<void>;
}

interface Holder {
  readonly pid: number;
  readonly host: string;
}

/** The folders this process holds, shared by every store on them (one lock per process, not per store). */
const held = new Map<string, { holders: number; taken: Promise<void> }>();
/** The lock files this process has linked into place (and so may remove at exit). */
const owned = new Set<string>();
let exitHookSet = false;

/**
 * Takes the folder for this process (its `store.lock` names the holder's pid and host): refuses with
 * {@link ChatStoreLockedError} while another live process holds it, takes over a lock whose process has died.
 * `onTaken` runs once, when this process takes it (no other process writes there from then on, so what a killed
 * writer left can be cleaned). Every file store takes its folder this way; a host keeping other data in a folder
 * (PGlite's, say) can too.
 */
export async function lockFolder(root: string, onTaken: () => Promise<void> = async () => {}): Promise<FolderLock> {
  let entry = held.get(root);
  if (entry === undefined) {
    const taken = takeLock(root).then(onTaken);
    entry = { holders: 0, taken };
    held.set(root, entry);
    const created = entry;
    taken.catch(() => {
      if (held.get(root) === created) held.delete(root);
    });
  }
  await entry.taken;
  entry.holders += 1;
  const holding = entry;
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      holding.holders -= 1;
      if (holding.holders > 0 || held.get(root) !== holding) return;
      held.delete(root);
      owned.delete(join(root, lockFileName));
      await removeIfOurs(join(root, lockFileName));
    },
  };
}

async function takeLock(root: string): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  const path = join(root, lockFileName);
  const me: Holder = { pid: process.pid, host: hostname() };
  // Written whole beside it, then linked into place: link refuses an existing name, so the lock is taken by
  // exactly one process, and nobody ever reads a lock file half written.
  const draft = `${path}.new-${process.pid}-${randomBytes(4).toString("hex")}`;
  await writeFile(draft, `${JSON.stringify({ ...me, since: new Date().toISOString() })}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await link(draft, path);
        owned.add(path);
        setExitHook();
        return;
      } catch (error) {
        if (errorCode(error) !== "EEXIST") throw error;
      }
      const holder = await readHolder(path);
      if (holder === "gone") continue;
      if (holder !== null && holder.host === me.host && holder.pid === me.pid) {
        // Left by an earlier process that had this pid (a container restarted): this process is not it, and it
        // is gone, since this pid is ours.
        await rm(path, { force: true });
        continue;
      }
      if (holder === null || holder.host !== me.host || isAlive(holder.pid)) {
        throw new ChatStoreLockedError({
          root,
          lockPath: path,
          holderPid: holder?.pid ?? null,
          holderHost: holder?.host ?? null,
        });
      }
      await takeOverStale(path, holder);
    }
    const holder = await readHolder(path);
    const known = holder === "gone" ? null : holder;
    throw new ChatStoreLockedError({
      root,
      lockPath: path,
      holderPid: known?.pid ?? null,
      holderHost: known?.host ?? null,
    });
  } finally {
    await rm(draft, { force: true });
  }
}

/**
 * Moves a dead holder's lock out of the way. Another process may be doing the same: the lock moved is checked,
 * and one that is not the dead holder's (just taken by that other process) is linked back into place.
 */
async function takeOverStale(path: string, stale: Holder): Promise<void> {
  const moved = `${path}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await rename(path, moved);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return;
    throw error;
  }
  try {
    const holder = await readHolder(moved);
    if (holder !== "gone" && holder !== null && (holder.pid !== stale.pid || holder.host !== stale.host)) {
      await link(moved, path).catch(() => undefined);
    }
  } finally {
    await rm(moved, { force: true });
  }
}

/** The lock's holder; null when the file is not a lock this code wrote; "gone" when there is no file. */
async function readHolder(path: string): Promise<Holder | null | "gone"> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return "gone";
    return null;
  }
  try {
    const value = JSON.parse(text) as { pid?: unknown; host?: unknown };
    if (typeof value.pid === "number" && Number.isSafeInteger(value.pid) && value.pid > 0) {
      return { pid: value.pid, host: typeof value.host === "string" ? value.host : "" };
    }
  } catch {
    // Not JSON: not ours to judge.
  }
  return null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return errorCode(error) !== "ESRCH";
  }
}

async function removeIfOurs(path: string): Promise<void> {
  const holder = await readHolder(path);
  if (holder !== "gone" && holder !== null && holder.pid === process.pid && holder.host === hostname()) {
    await rm(path, { force: true });
  }
}

/** A process that ends normally leaves no lock behind (a killed one leaves a stale lock, taken over later). */
function setExitHook(): void {
  if (exitHookSet) return;
  exitHookSet = true;
  process.once("exit", () => {
    for (const path of owned) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone.
      }
    }
  });
}
