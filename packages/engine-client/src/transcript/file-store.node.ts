import { constants, copyFile, type FileHandle, open, readFile, rename, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  assertSafeChatId,
  ChatLogCorruptError,
  ChatStoreReadError,
  ChatStoreWriteError,
  EngineClientError,
  TranscriptCorruptError,
  tornReason,
  unreadableLogLine,
} from "../errors.js";
import { createChatQueue } from "../kit/chat-queue.js";
import type { ChatMessage } from "../messages.js";
import type { ChatDirectory } from "./chat-directory.js";
import { readChatWith } from "./chat-reading.js";
import type { ChatStore } from "./chat-store.js";
import {
  asidePath,
  errorCode,
  makeFolder,
  pruneAsideCopies,
  removeTemporaryFiles,
  replaceFile,
  syncFile,
  syncFolder,
  writeFileAtomically,
} from "./durable-files.node.js";
import { fileChatDirectory } from "./file-chat-directory.node.js";
import { type FolderLock, lockFolder } from "./folder-lock.node.js";
import { type LogLines, linesFrom, nextSeqOf, readLines, tailLines } from "./log-lines.node.js";
import {
  describeRepairs,
  type LogReading,
  longestLogLineBytes,
  readLogFile,
  writeRepairedLog,
} from "./log-reader.node.js";
import {
  checkLogMessages,
  checkLogSequence,
  decodeTranscript,
  encodeTranscript,
  type TranscriptFile,
} from "./transcript-file.js";

/** Options of {@link createFileChatStore}. */
export interface FileChatStoreOptions {
  /** The folder that holds `api-sessions/` (transcripts), `chats/` (logs) and `store.lock`; created on first use. */
  readonly root: string;
  /**
   * The longest log line read, in bytes. Default and most: the runtime's longest string (about 512 MiB on
   * V8); a longer line is reported as unreadable with this limit. Lower it only to test that path.
   */
  readonly maxLogLineBytes?: number;
}

export { asideCopiesKept } from "./durable-files.node.js";

/** How many chats' line starts a file store keeps in memory (each a number per line read). */
const linesKeptChats = 64;

/** A {@link ChatStore} on Node's file system. */
export interface FileChatStore extends ChatStore {
  /** The chats in the folder: one per log, titled in `<root>/titles/<id>.json` once renamed. */
  readonly directory: ChatDirectory;
  /** The absolute root folder. */
  readonly root: string;
  /** Where a chat's transcript lives: `<root>/api-sessions/<id>.json`. */
  transcriptPath(chatId: string): string;
  /** Where a chat's log lives: `<root>/chats/<id>.jsonl`, one message per line. */
  logPath(chatId: string): string;
  /**
   * Lets go of the folder: when no other store of this process uses it, its lock file is removed, so another
   * process may use it. The store can be used again afterwards (it takes the folder again).
   */
  close(): Promise<void>;
}

/**
 * A {@link ChatStore} on the file system. A transcript is replaced whole (written to a temporary file beside
 * it, flushed, renamed over it, the folder flushed), so a crash leaves the old file or the new one, never a mix;
 * leftover `<id>.json.tmp-*` files are never read. A log is appended to and flushed; a crash mid-append can
 * only cut its last line short, which the next read reports and repairs (see `ChatLogCorruptError`).
 *
 * One process per root: the first call takes the folder (`<root>/store.lock`, holding the process id), and
 * another process is refused with `ChatStoreLockedError` until this one ends or calls `close()`; a lock left by a
 * process that died is taken over. Taking the folder removes temporary files a killed writer left. Stores of one
 * process share the lock; calls for one chat are queued per store, and a log appended by another store of the
 * process is noticed by its size.
 */
export function createFileChatStore(options: FileChatStoreOptions): FileChatStore {
  const root = resolve(options.root);
  const transcriptFolder = join(root, "api-sessions");
  const logFolder = join(root, "chats");
  const queue = createChatQueue();
  const readLimits = options.maxLogLineBytes === undefined ? {} : { maxLineBytes: options.maxLogLineBytes };
  let lock: Promise<FolderLock> | null = null;
  /** Takes the folder for this process on first use (again after `close`); refused while another process holds it. */
  function hold(): Promise<FolderLock> {
    if (lock === null) {
      const taking = lockFolder(root, () => removeTemporaryFiles([transcriptFolder, logFolder]));
      lock = taking;
      taking.catch(() => {
        if (lock === taking) lock = null;
      });
    }
    return lock;
  }
  // Where the lines of each log read or written here start, as far as known, with the file size that was true
  // for: another store of the process that appended since changes the size, and the lines after it are read.
  // A bounded number of chats, the least recently read dropped first.
  const logLines = new Map<string, LogLines>();
  const rememberLines = (chatId: string, lines: LogLines) => {
    logLines.delete(chatId);
    logLines.set(chatId, lines);
    if (logLines.size > linesKeptChats) logLines.delete(logLines.keys().next().value as string);
  };

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
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch (error) {
      if (errorCode(error) === "ENOENT") {
        logLines.delete(chatId);
        return [];
      }
      throw new ChatStoreReadError({ chatId, location: path, cause: error });
    }
    let reading: LogReading;
    try {
      reading = await readLogFile(handle, readLimits);
    } catch (error) {
      await handle.close();
      throw new ChatStoreReadError({ chatId, location: path, cause: error });
    }
    if (!reading.ok) {
      await handle.close();
      throw unreadableLogLine({
        chatId,
        location: path,
        line: reading.line,
        reason: reading.reason,
        cause: reading.cause,
      });
    }
    const { messages, repairs, tornBytes } = reading;
    if (tornBytes === 0 && repairs.length === 0) {
      await handle.close();
      rememberLines(chatId, { size: reading.completeBytes, first: messages.length, starts: [reading.completeBytes] });
      return messages;
    }
    // Repaired once, the whole file kept aside first: a line cut short by a crash mid-append is cut off; a seq
    // written twice (two writers at once) is renumbered, or dropped when its line is a byte-for-byte copy.
    let size = reading.completeBytes;
    const keptAt = asidePath(path, repairs.length > 0 ? "repaired" : "torn");
    try {
      await copyFile(path, keptAt, constants.COPYFILE_EXCL);
      await syncFile(keptAt);
      if (repairs.length > 0) {
        size = await replaceFile(path, (to) => writeRepairedLog(handle, to, repairs, readLimits));
      } else {
        const writable = await open(path, "r+");
        try {
          await writable.truncate(reading.completeBytes);
          await writable.sync();
        } finally {
          await writable.close();
        }
      }
    } finally {
      await handle.close();
    }
    await pruneAsideCopies(path);
    rememberLines(chatId, { size, first: messages.length, starts: [size] });
    const reasons = [...(tornBytes > 0 ? [tornReason] : []), ...(repairs.length > 0 ? [describeRepairs(repairs)] : [])];
    throw new ChatLogCorruptError({
      chatId,
      location: path,
      keptAt,
      line: repairs[0]?.line ?? reading.lines + 1,
      torn: tornBytes > 0,
      repaired: true,
      keptMessages: messages.length,
      reason: reasons.join("; "),
    });
  }

  /**
   * The log's lines as far as known, its end read from the file's end (cheap for any length of log). A file
   * whose end is not as the store writes it is read whole (`loadLog`), which repairs it or reports it.
   */
  async function linesOf(chatId: string): Promise<LogLines> {
    const path = logPath(chatId);
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw new ChatStoreReadError({ chatId, location: path, cause: error });
      logLines.delete(chatId);
      return { size: 0, first: 0, starts: [0] };
    }
    let lines: LogLines | null;
    try {
      lines = await tailLines(handle, (await handle.stat()).size, logLines.get(chatId));
    } finally {
      await handle.close();
    }
    if (lines === null) {
      await loadLog(chatId);
      return logLines.get(chatId) ?? { size: 0, first: 0, starts: [0] };
    }
    rememberLines(chatId, lines);
    return lines;
  }

  /** The log's messages of seqs `from` to `to` (excluded): only their lines read, unless the log needs the full read. */
  async function logRange(chatId: string, from: number, to: number): Promise<ChatMessage[]> {
    let lines = await linesOf(chatId);
    const handle = await open(logPath(chatId), "r").catch(() => null);
    let messages: ChatMessage[] | null = null;
    if (handle !== null) {
      try {
        const known = await linesFrom(handle, lines, from);
        if (known !== false) {
          lines = known;
          messages = await readLines(handle, lines, from, to, options.maxLogLineBytes ?? longestLogLineBytes);
        }
      } finally {
        await handle.close();
      }
    }
    if (messages !== null) {
      rememberLines(chatId, lines);
      return messages;
    }
    return (await loadLog(chatId)).slice(from, to);
  }

  async function logEnd(chatId: string): Promise<{ readonly nextSeq: number; readonly lines: LogLines }> {
    const lines = await linesOf(chatId);
    return { nextSeq: nextSeqOf(lines), lines };
  }

  /** The chat's transcript, or null; one that cannot be read or does not pass `check` is moved aside. */
  async function transcriptOf(
    chatId: string,
    check: ((file: TranscriptFile) => string | null) | undefined,
  ): Promise<TranscriptFile | null> {
    const path = transcriptPath(chatId);
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
      const decoded = decodeTranscript(chatId, text, check);
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
    await pruneAsideCopies(path);
    throw new TranscriptCorruptError({ chatId, location: path, keptAt: movedTo, reason, cause });
  }

  /**
   * Runs one call; what the file system throws (no space, no permission, an I/O error) comes out as the store's
   * typed error. The store's own errors (a wrong seq, a corrupt file, a folder held by another process) pass.
   */
  async function storage<T>(
    kind: "read" | "write",
    chatId: string,
    location: string,
    step: () => Promise<T>,
  ): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (EngineClientError.isInstance(error)) throw error;
      throw kind === "read"
        ? new ChatStoreReadError({ chatId, location, cause: error })
        : new ChatStoreWriteError({ chatId, location, cause: error });
    }
  }

  const directory = fileChatDirectory({
    root,
    logPath,
    transcriptPath,
    run: (kind, chatId, step) =>
      storage(kind, chatId, logPath(chatId), async () => {
        await hold();
        return queue.run(chatId, step);
      }),
    runAll: (step) =>
      storage("read", "(the list)", root, async () => {
        await hold();
        return step();
      }),
    forget: (chatId) => logLines.delete(chatId),
  });

  return {
    root,
    transcriptPath,
    logPath,
    directory,

    async close() {
      const taken = lock;
      lock = null;
      if (taken === null) return;
      const held = await taken.catch(() => null);
      await held?.release();
    },

    async readLog(chatId) {
      assertSafeChatId(chatId);
      return storage("read", chatId, logPath(chatId), async () => {
        await hold();
        return queue.run(chatId, () => loadLog(chatId));
      });
    },

    async readChat(chatId, options) {
      assertSafeChatId(chatId);
      return storage("read", chatId, logPath(chatId), async () => {
        await hold();
        return queue.run(chatId, () =>
          readChatWith(
            {
              chatId,
              async head(check) {
                const nextSeq = nextSeqOf(await linesOf(chatId));
                return { nextSeq, transcript: await transcriptOf(chatId, check && ((file) => check(file, nextSeq))) };
              },
              range: (from, to) => logRange(chatId, from, to),
            },
            options,
          ),
        );
      });
    },

    async appendLog(chatId, messages) {
      assertSafeChatId(chatId);
      const checked = checkLogMessages(chatId, messages);
      return storage("write", chatId, logPath(chatId), async () => {
        await hold();
        return queue.run(chatId, async () => {
          const end = await logEnd(chatId);
          checkLogSequence(chatId, end.nextSeq, checked);
          if (checked.length === 0) return;
          const path = logPath(chatId);
          const texts = checked.map((message) => Buffer.from(`${JSON.stringify(message)}\n`, "utf8"));
          const bytes = Buffer.concat(texts);
          await makeFolder(logFolder);
          logLines.delete(chatId);
          const handle = await open(path, "a", 0o600);
          try {
            await handle.writeFile(bytes);
            await handle.sync();
          } finally {
            await handle.close();
          }
          const size = end.lines.size;
          if (size === 0) await syncFolder(logFolder);
          const starts = [...end.lines.starts];
          for (const text of texts) starts.push((starts.at(-1) as number) + text.length);
          rememberLines(chatId, { size: size + bytes.length, first: end.lines.first, starts });
        });
      });
    },

    async readTranscript(chatId, options) {
      const path = transcriptPath(chatId);
      return storage("read", chatId, path, async () => {
        await hold();
        return queue.run(chatId, () => transcriptOf(chatId, options?.check));
      });
    },

    async writeTranscript(chatId, file) {
      const path = transcriptPath(chatId);
      const json = encodeTranscript(chatId, file);
      return storage("write", chatId, path, async () => {
        await hold();
        return queue.run(chatId, async () => {
          await makeFolder(transcriptFolder);
          await writeFileAtomically(path, json);
        });
      });
    },

    async transcriptBytes(chatId) {
      const path = transcriptPath(chatId);
      return storage("read", chatId, path, async () => {
        await hold();
        return queue.run(chatId, async () => {
          try {
            return (await stat(path)).size;
          } catch (error) {
            if (errorCode(error) === "ENOENT") return 0;
            throw error;
          }
        });
      });
    },
  };
}
