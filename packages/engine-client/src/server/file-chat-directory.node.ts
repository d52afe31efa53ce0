import { open, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { WireChatListing } from "../protocol/wire.js";
import type { FileChatStore } from "../transcript/file-store.node.js";
import type { ChatDirectory } from "./chat-directory.js";

const titleLength = 80;

/** The first line of the chat's first person's message, from the log's first line (read no further). */
async function titleOf(logPath: string, fallback: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(logPath, "r");
    const buffer = Buffer.alloc(16_384);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const firstLine = buffer.subarray(0, bytesRead).toString("utf8").split("\n")[0] ?? "";
    const message = JSON.parse(firstLine) as { role?: unknown; parts?: unknown };
    const parts = Array.isArray(message.parts) ? (message.parts as { type?: unknown; text?: unknown }[]) : [];
    const text = parts.find((part) => part.type === "text" && typeof part.text === "string")?.text as
      | string
      | undefined;
    const line = text?.trim().split("\n")[0]?.trim();
    if (!line) return fallback;
    return line.length > titleLength ? `${line.slice(0, titleLength - 1)}…` : line;
  } catch {
    // A first line cut short (a long first message) or unreadable: the id will do.
    return fallback;
  } finally {
    await handle?.close();
  }
}

/**
 * The chats of a file store (`createFileChatStore`) as a {@link ChatDirectory}: one per log under `chats/`,
 * newest first by the log's last write, titled by the first person's message.
 */
export function createFileChatDirectory(store: FileChatStore): ChatDirectory {
  const logFolder = join(store.root, "chats");
  async function listed(): Promise<{ id: string; updated: number }[]> {
    let names: string[];
    try {
      names = await readdir(logFolder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const chats: { id: string; updated: number }[] = [];
    for (const name of names) {
      if (!name.endsWith(".jsonl")) continue;
      const id = name.slice(0, -".jsonl".length);
      try {
        const info = await stat(store.logPath(id));
        chats.push({ id, updated: Math.round(info.mtimeMs) });
      } catch {
        // Not a chat id this store would write, or gone meanwhile.
      }
    }
    return chats.sort((a, b) => b.updated - a.updated || a.id.localeCompare(b.id));
  }
  return {
    async list({ offset, limit }) {
      const all = await listed();
      const page = all.slice(offset, offset + limit);
      const chats: WireChatListing[] = [];
      for (const chat of page) chats.push({ ...chat, title: await titleOf(store.logPath(chat.id), chat.id) });
      return { chats, total: all.length };
    },
    async remove(chatId) {
      const paths = [store.logPath(chatId), store.transcriptPath(chatId)];
      let existed = false;
      for (const path of paths) {
        try {
          await stat(path);
          existed = true;
          await rm(path, { force: true });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }
      return existed;
    },
  };
}
