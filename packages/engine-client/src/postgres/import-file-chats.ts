import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { ChatImportConflictError, ChatLogCorruptError, TranscriptCorruptError } from "../errors.js";
import type { ChatMessage } from "../messages.js";
import type { FileChatStore } from "../transcript/file-store.node.js";
import type { TranscriptFile } from "../transcript/transcript-file.js";
import type { PostgresChatStore } from "./postgres-store.js";

/** What {@link importFileChats} did, chat by chat. */
export interface FileChatsImport {
  /** Chats written to the database. */
  readonly imported: readonly string[];
  /** Chats the database already held whole (an import that stopped half-way and ran again). */
  readonly alreadyThere: readonly string[];
  /**
   * Chats whose log ended in a torn line or whose transcript was unreadable: the file store kept the bad bytes
   * beside the file (as it does on any read) and what could be read was imported.
   */
  readonly repaired: readonly string[];
}

const idsIn = async (folder: string, suffix: string): Promise<string[]> => {
  try {
    return (await readdir(folder)).filter((name) => name.endsWith(suffix)).map((name) => name.slice(0, -suffix.length));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
};

/**
 * Copies every chat of a file store (`createFileChatStore`) into a Postgres chat store: each chat's log and
 * transcript in one transaction, its last change kept as the chat's. Safe to run again: a chat the database
 * already holds with as many messages is left alone, so an import cut short simply runs again. The files are
 * only read (the file store's own repairs aside); what becomes of them is the caller's choice.
 *
 * A log with a complete line that is not a message stops the import with the file store's
 * `ChatLogCorruptError` (nothing is guessed): the chats before it stay imported, the rest are untouched.
 */
export async function importFileChats(options: {
  readonly from: FileChatStore;
  readonly into: PostgresChatStore;
}): Promise<FileChatsImport> {
  const { from, into } = options;
  const logIds = await idsIn(join(from.root, "chats"), ".jsonl");
  const transcriptIds = await idsIn(join(from.root, "api-sessions"), ".json");
  const chatIds = [...new Set([...logIds, ...transcriptIds])].sort();
  const imported: string[] = [];
  const alreadyThere: string[] = [];
  const repaired: string[] = [];
  for (const chatId of chatIds) {
    let wasRepaired = false;
    let log: ChatMessage[];
    try {
      log = await from.readLog(chatId);
    } catch (error) {
      // A torn last line: the store kept the file aside and cut it back; the complete lines read now.
      if (!(ChatLogCorruptError.isInstance(error) && error.repaired)) throw error;
      wasRepaired = true;
      log = await from.readLog(chatId);
    }
    let file: TranscriptFile | null;
    try {
      file = await from.readTranscript(chatId);
    } catch (error) {
      // Moved aside by the file store; the engine rebuilds the transcript from the log.
      if (!TranscriptCorruptError.isInstance(error)) throw error;
      wasRepaired = true;
      file = null;
    }
    const stored = await into.readLog(chatId);
    const storedFile = stored.length === 0 ? await into.readTranscript(chatId) : null;
    if (stored.length > 0 || storedFile !== null) {
      if (stored.length < log.length) {
        throw new ChatImportConflictError({
          chatId,
          logPath: from.logPath(chatId),
          databaseMessages: stored.length,
          fileMessages: log.length,
        });
      }
      alreadyThere.push(chatId);
      continue;
    }
    if (file !== null) await into.writeTurn(chatId, log, file);
    else await into.appendLog(chatId, log);
    const changed = await lastChange(from, chatId);
    if (changed !== null) {
      await into.db.query(
        "update conch_chats set updated_at = to_timestamp($3::float8 / 1000) where user_id = $1 and chat_id = $2",
        [into.userId, chatId, changed],
      );
    }
    imported.push(chatId);
    if (wasRepaired) repaired.push(chatId);
  }
  return { imported, alreadyThere, repaired };
}

async function lastChange(store: FileChatStore, chatId: string): Promise<number | null> {
  const times: number[] = [];
  for (const path of [store.logPath(chatId), store.transcriptPath(chatId)]) {
    try {
      times.push((await stat(path)).mtimeMs);
    } catch {
      // Not there: the other one says.
    }
  }
  return times.length === 0 ? null : Math.max(...times);
}
