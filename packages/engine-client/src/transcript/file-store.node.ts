import { randomBytes } from "node:crypto";
import { constants, copyFile, type FileHandle, mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { assertSafeChatId } from "../errors.js";
import type { ChatMessage } from "../messages.js";
import { createChatQueue } from "./chat-queue.js";
import type { ChatStore } from "./chat-store.js";
import { ChatLogCorruptError, ChatStoreReadError, TranscriptCorruptError, unreadableLogLine } from "./errors.js";
import {
  checkLogMessages,
  checkLogSequence,
  decodeLogMessage,
  decodeTranscript,
  encodeTranscript,
  type TranscriptFile,
} from "./transcript-file.js";

/** Options of {@link createFileChatStore}. */
export interface FileChatStoreOptions {
  /** The folder that holds `api-sessions/` (transcripts) and `chats/` (logs); created on the first write. */
  readonly root: string;
}

/** A {@link ChatStore} on Node's file system. */
export interface FileChatStore extends ChatStore {
  /** The absolute root folder. */
  readonly root: string;
  /** Where a chat's transcript lives: `<root>/api-sessions/<id>.json`. */
  transcriptPath(chatId: string): string;
  /** Where a chat's log lives: `<root>/chats/<id>.jsonl`, one message per line. */
  logPath(chatId: string): string;
}

/**
 * A {@link ChatStore} on the file system. A transcript is replaced whole (written to a temporary file beside
 * it, flushed, renamed over it, the folder flushed), so a crash leaves the old file or the new one, never a mix;
 * leftover `<id>.json.tmp-*` files are never read. A log is appended to and flushed; a crash mid-append can
 * only cut its last line short, which the next read reports and repairs (see `ChatLogCorruptError`).
 *
 * One store per root per process: calls for one chat are queued in this store, not across processes.
 */
export function createFileChatStore(options: FileChatStoreOptions): FileChatStore {
  const root = resolve(options.root);
  const transcriptFolder = join(root, "api-sessions");
  const logFolder = join(root, "chats");
  const queue = createChatQueue();
  // The next seq of each log read or written here, with the file size it was true for: another store that
  // appended since changes the size, and the log is read again instead of trusted.
  const logEnds = new Map<string, { readonly nextSeq: number; readonly size: number }>();

  const transcriptPath = (chatId: string): string => {
    assertSafeChatId(chatId);
    return join(transcriptFolder, `${chatId}.json`);
  };
  const logPath = (chatId: string): string => {
    assertSafeChatId(chatId);
    return join(logFolder, `${chatId}.jsonl`);
  };

  async function loadLog(chatId: string): Promise<ChatMessage[]> {
    const path = logPath(chatId);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if (errorCode(error) === "ENOENT") {
        logEnds.delete(chatId);
        return [];
      }
      throw new ChatStoreReadError({ chatId, location: path, cause: error });
    }
    // Every append ends in a newline, so anything after the last one is an append that never finished.
    const completeLength = bytes.lastIndexOf(0x0a) + 1;
    const messages: ChatMessage[] = [];
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, completeLength));
    } catch (cause) {
      const line = firstBadUtf8Line(bytes.subarray(0, completeLength));
      throw unreadableLogLine({ chatId, location: path, line, reason: "the line is not UTF-8", cause });
    }
    const lines = text.length === 0 ? [] : text.slice(0, -1).split("\n");
    for (const [index, line] of lines.entries()) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (cause) {
        throw unreadableLogLine({ chatId, location: path, line: index + 1, reason: "the line is not JSON", cause });
      }
      const decoded = decodeLogMessage(value, index);
      if (!decoded.ok) {
        throw unreadableLogLine({
          chatId,
          location: path,
          line: index + 1,
          reason: decoded.reason,
          cause: decoded.cause,
        });
      }
      messages.push(decoded.message);
    }
    if (completeLength < bytes.length) {
      const keptAt = asidePath(path, "torn");
      await copyFile(path, keptAt, constants.COPYFILE_EXCL);
      await syncFile(keptAt);
      const handle = await open(path, "r+");
      try {
        await handle.truncate(completeLength);
        await handle.sync();
      } finally {
        await handle.close();
      }
      logEnds.set(chatId, { nextSeq: messages.length, size: completeLength });
      throw new ChatLogCorruptError({
        chatId,
        location: path,
        keptAt,
        line: lines.length + 1,
        torn: true,
        repaired: true,
        keptMessages: messages.length,
        reason: "the last line was cut short",
      });
    }
    logEnds.set(chatId, { nextSeq: messages.length, size: bytes.length });
    return messages;
  }

  async function logEnd(chatId: string): Promise<{ readonly nextSeq: number; readonly size: number }> {
    const path = logPath(chatId);
    let size = 0;
    try {
      size = (await stat(path)).size;
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw new ChatStoreReadError({ chatId, location: path, cause: error });
    }
    const known = logEnds.get(chatId);
    if (known !== undefined && known.size === size) return known;
    if (size === 0) return { nextSeq: 0, size: 0 };
    const messages = await loadLog(chatId);
    return logEnds.get(chatId) ?? { nextSeq: messages.length, size };
  }

  return {
    root,
    transcriptPath,
    logPath,

    async readLog(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, () => loadLog(chatId));
    },

    async appendLog(chatId, messages) {
      assertSafeChatId(chatId);
      const checked = checkLogMessages(chatId, messages);
      return queue.run(chatId, async () => {
        const end = await logEnd(chatId);
        checkLogSequence(chatId, end.nextSeq, checked);
        if (checked.length === 0) return;
        const path = logPath(chatId);
        const lines = Buffer.from(checked.map((message) => `${JSON.stringify(message)}\n`).join(""), "utf8");
        await makeFolder(logFolder);
        logEnds.delete(chatId);
        const handle = await open(path, "a", 0o600);
        try {
          await handle.writeFile(lines);
          await handle.sync();
        } finally {
          await handle.close();
        }
        if (end.size === 0) await syncFolder(logFolder);
        logEnds.set(chatId, { nextSeq: end.nextSeq + checked.length, size: end.size + lines.length });
      });
    },

    async readTranscript(chatId, options) {
      const path = transcriptPath(chatId);
      return queue.run(chatId, async (): Promise<TranscriptFile | null> => {
        let bytes: Buffer;
        try {
          bytes = await readFile(path);
        } catch (error) {
          if (errorCode(error) === "ENOENT") return null;
          throw new ChatStoreReadError({ chatId, location: path, cause: error });
        }
        let text: string | undefined;
        let reason = "it is not UTF-8";
        let cause: unknown;
        try {
          // Fatal, so bytes that are not UTF-8 are not quietly turned into U+FFFD and written back so.
          text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        } catch (error) {
          cause = error;
        }
        if (text !== undefined) {
          const decoded = decodeTranscript(chatId, text, options?.check);
          if (decoded.ok) return decoded.file;
          reason = decoded.reason;
          cause = decoded.cause;
        }
        const keptAt = asidePath(path, "corrupt");
        let movedTo = path;
        try {
          await rename(path, keptAt);
          await syncFolder(transcriptFolder);
          movedTo = keptAt;
        } catch (error) {
          cause = new AggregateError([cause, error], "could not move the transcript aside");
        }
        throw new TranscriptCorruptError({ chatId, location: path, keptAt: movedTo, reason, cause });
      });
    },

    async writeTranscript(chatId, file) {
      const path = transcriptPath(chatId);
      const json = encodeTranscript(chatId, file);
      return queue.run(chatId, async () => {
        await makeFolder(transcriptFolder);
        await writeFileAtomically(path, json);
      });
    },

    async transcriptBytes(chatId) {
      const path = transcriptPath(chatId);
      return queue.run(chatId, async () => {
        try {
          return (await stat(path)).size;
        } catch (error) {
          if (errorCode(error) === "ENOENT") return 0;
          throw new ChatStoreReadError({ chatId, location: path, cause: error });
        }
      });
    },
  };
}

/**
 * Replaces `path` whole: the bytes go to a new file beside it, are flushed, and the file is renamed over the
 * target (atomic on one file system); then the folder is flushed so the rename itself survives a power cut.
 */
async function writeFileAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`;
  let handle: FileHandle | undefined;
  try {
    handle = await open(temporary, "wx", 0o600);
    await handle.writeFile(text, "utf8");
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temporary, path);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncFolder(dirname(path));
}

async function makeFolder(folder: string): Promise<void> {
  const created = await mkdir(folder, { recursive: true, mode: 0o700 });
  // A new folder is itself an entry of its parent, which must be flushed for the folder to survive a crash.
  if (created !== undefined) await syncFolder(dirname(folder));
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncFolder(folder: string): Promise<void> {
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

function asidePath(path: string, kind: "corrupt" | "torn"): string {
  return `${path}.${kind}-${Date.now()}-${randomBytes(3).toString("hex")}`;
}

/** The 1-based line holding the first byte sequence that is not UTF-8. */
function firstBadUtf8Line(bytes: Uint8Array): number {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let line = 1;
  let start = 0;
  for (let index = 0; index < bytes.length; index++) {
    if (bytes[index] !== 0x0a) continue;
    try {
      decoder.decode(bytes.subarray(start, index));
    } catch {
      return line;
    }
    line++;
    start = index + 1;
  }
  return line;
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
