// The file store's file-system steps: atomic replacement, flushing, the copies kept aside and what killed writers
// left behind.
import { randomBytes } from "node:crypto";
import { type FileHandle, mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** How many copies kept aside (`.corrupt-*`, `.torn-*`, `.repaired-*`) one file keeps: the newest. */
export const asideCopiesKept = 5;

/**
 * Replaces `path` whole: the bytes go to a new file beside it, are flushed, and the file is renamed over the
 * target (atomic on one file system); then the folder is flushed so the rename itself survives a power cut.
 */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  await replaceFile(path, (handle) => handle.writeFile(text, "utf8"));
}

/** {@link writeFileAtomically} with the bytes written by `write`; returns the new file's size. */
export async function replaceFile(path: string, write: (handle: FileHandle) => Promise<void>): Promise<number> {
  const temporary = `${path}${temporaryMark}${process.pid}-${randomBytes(6).toString("hex")}`;
  let handle: FileHandle | undefined;
  let size: number;
  try {
    handle = await open(temporary, "wx", 0o600);
    await write(handle);
    await handle.sync();
    size = (await handle.stat()).size;
    await handle.close();
    handle = undefined;
    await rename(temporary, path);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncFolder(dirname(path));
  return size;
}

/** Temporary files are `<name>.tmp-<pid>-<random>`. */
export const temporaryMark = ".tmp-";

/**
 * Removes what killed writers left: temporary files of other processes (this process holds the folder now, so
 * no other process is writing them). A file this code did not name so is left alone.
 */
export async function removeTemporaryFiles(folders: readonly string[]): Promise<void> {
  const pattern = /\.tmp-(\d+)-[0-9a-f]+$/;
  for (const folder of folders) {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (error) {
      if (errorCode(error) === "ENOENT") continue;
      throw error;
    }
    for (const name of names) {
      const pid = pattern.exec(name)?.[1];
      if (pid !== undefined && Number(pid) !== process.pid) await rm(join(folder, name), { force: true });
    }
  }
}

/** Copies kept aside of `path` beyond the newest {@link asideCopiesKept} are removed (a file that keeps failing
 * must not fill the disk with copies). */
export async function pruneAsideCopies(path: string): Promise<void> {
  try {
    await removeOlderCopies(path);
  } catch {
    // Best effort: the copy just made is kept either way, and the next one tries again.
  }
}

export async function removeOlderCopies(path: string): Promise<void> {
  const folder = dirname(path);
  const prefix = `${basename(path)}.`;
  const pattern = /^(?:corrupt|torn|repaired)-(\d+)-[0-9a-f]+$/;
  const copies: { name: string; at: number }[] = [];
  for (const name of await readdir(folder)) {
    if (!name.startsWith(prefix)) continue;
    const at = pattern.exec(name.slice(prefix.length))?.[1];
    if (at !== undefined) copies.push({ name, at: Number(at) });
  }
  copies.sort((a, b) => b.at - a.at || b.name.localeCompare(a.name));
  for (const copy of copies.slice(asideCopiesKept)) await rm(join(folder, copy.name), { force: true });
}

export async function makeFolder(folder: string): Promise<void> {
  const created = await mkdir(folder, { recursive: true, mode: 0o700 });
  // A new folder is itself an entry of its parent, which must be flushed for the folder to survive a crash.
  if (created !== undefined) await syncFolder(dirname(folder));
}

export async function syncFile(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function syncFolder(folder: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(folder, "r");
    await handle.sync();
  } catch (error) {
    // Windows cannot open or flush a folder; there the rename is as durable as the file system makes it.
    if (!["EISDIR", "EPERM", "EINVAL", "EBADF", "ENOTSUP", "EACCES"].includes(errorCode(error) ?? "")) throw error;
  } finally {
    await handle?.close();
  }
}

export function asidePath(path: string, kind: "corrupt" | "torn" | "repaired"): string {
  return `${path}.${kind}-${Date.now()}-${randomBytes(3).toString("hex")}`;
}

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
