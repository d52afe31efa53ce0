import { open, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { assertSafeChatId } from "../errors.js";
import type { ChatMessage } from "../messages.js";
import { type ChatDirectory, checkedTitle, firstWordsTitle, newestFirst } from "./chat-directory.js";
import { errorCode, makeFolder, writeFileAtomically } from "./durable-files.node.js";
import type { FileChatStore } from "./file-store.node.js";

/** What the file store's directory works with: its folders, and its lock, queue and error mapping. */
export interface FileDirectoryParts {
  readonly root: string;
  logPath(chatId: string): string;
  transcriptPath(chatId: string): string;
  /** Runs a step for the chat under the folder's lock, in the chat's queue, with the store's typed errors. */
  run<T>(kind: "read" | "write", chatId: string, step: () => Promise<T>): Promise<T>;
  /** Runs a step over the whole folder under its lock, with the store's typed errors. */
  runAll<T>(step: () => Promise<T>): Promise<T>;
  /** Forgets what the store remembers of a removed chat's log. */
  forget(chatId: string): void;
}

/** The first line of the log holds the first message; a first line longer than this is titled by the id. */
const firstLineBytes = 65_536;

/** The first words of the chat's first message, from the log's first line (read no further); null without. */
async function firstWords(logPath: string): Promise<string | null> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(logPath, "r");
    const buffer = Buffer.alloc(firstLineBytes);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const firstLine = buffer.subarray(0, bytesRead).toString("utf8").split("\n")[0] ?? "";
    const message = JSON.parse(firstLine) as Partial<ChatMessage>;
    return firstWordsTitle(Array.isArray(message.parts) ? { parts: message.parts } : undefined);
  } catch {
    // A first line cut short (a very long first message) or unreadable: the id will do.
    return null;
  } finally {
    await handle?.close();
  }
}

/**
 * The chats of a file store as a {@link ChatDirectory}: one per log under `chats/`, newest first by the log's last
 * write; a person's title in `titles/<id>.json`.
 */
export function fileChatDirectory(parts: FileDirectoryParts): ChatDirectory {
  const titleFolder = join(parts.root, "titles");
  const titlePath = (chatId: string) => {
    assertSafeChatId(chatId);
    return join(titleFolder, `${chatId}.json`);
  };

  async function storedTitle(chatId: string): Promise<string | null> {
    try {
      const value = JSON.parse(await readFile(titlePath(chatId), "utf8")) as { title?: unknown };
      return typeof value.title === "string" && value.title ? value.title : null;
    } catch {
      // None, or written by hand into something unreadable: the first words will do.
      return null;
    }
  }

  async function exists(path: string): Promise<{ updated: number } | null> {
    try {
      return { updated: Math.round((await stat(path)).mtimeMs) };
    } catch (error) {
      if (errorCode(error) === "ENOENT") return null;
      throw error;
    }
  }

  /** The chat's last change, or null when nothing was written to it. */
  async function chatAt(chatId: string): Promise<{ updated: number } | null> {
    return (await exists(parts.logPath(chatId))) ?? (await exists(parts.transcriptPath(chatId)));
  }

  async function idsIn(folder: string, ending: string): Promise<string[]> {
    try {
      return (await readdir(folder))
        .filter((name) => name.endsWith(ending))
        .map((name) => name.slice(0, -ending.length));
    } catch (error) {
      if (errorCode(error) === "ENOENT") return [];
      throw error;
    }
  }

  return {
    list: (page) =>
      parts.runAll(async () => {
        // Listed: a chat holding a message (as on every store), newest log write first.
        const chats: { id: string; updated: number }[] = [];
        for (const id of await idsIn(join(parts.root, "chats"), ".jsonl")) {
          let found: { updated: number } | null;
          try {
            found = await exists(parts.logPath(id));
          } catch {
            // Not a chat id this store would write (a file put there by hand).
            continue;
          }
          if (found) chats.push({ id, updated: found.updated });
        }
        chats.sort(newestFirst);
        const listed = [];
        for (const chat of chats.slice(page.offset, page.offset + page.limit)) {
          const title = (await storedTitle(chat.id)) ?? (await firstWords(parts.logPath(chat.id))) ?? chat.id;
          listed.push({ id: chat.id, title, updated: chat.updated });
        }
        return { chats: listed, total: chats.length };
      }),

    async rename(chatId, title) {
      const kept = checkedTitle(chatId, title);
      return parts.run("write", chatId, async () => {
        if (!(await chatAt(chatId))) return false;
        await makeFolder(titleFolder);
        await writeFileAtomically(titlePath(chatId), JSON.stringify({ title: kept }));
        return true;
      });
    },

    async remove(chatId) {
      return parts.run("write", chatId, async () => {
        let existed = false;
        for (const path of [parts.logPath(chatId), parts.transcriptPath(chatId)]) {
          if (await exists(path)) existed = true;
          await rm(path, { force: true });
        }
        await rm(titlePath(chatId), { force: true });
        parts.forget(chatId);
        return existed;
      });
    },
  };
}

/** The chats of a file store (`createFileChatStore`): its `directory`, under the store's lock and queue. */
export function createFileChatDirectory(store: FileChatStore): ChatDirectory {
  return store.directory;
}
