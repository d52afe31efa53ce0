import { utf8Length } from "../context/estimate.js";
import {
  assertSafeChatId,
  ChatStoreReadError,
  ChatStoreWriteError,
  EngineClientError,
  TranscriptCorruptError,
  unreadableLogLine,
} from "../errors.js";
import { createChatQueue } from "../kit/chat-queue.js";
import type { ChatMessage } from "../messages.js";
import { type ChatDirectory, checkedTitle, firstWordsTitle, newestFirst, pageOf } from "./chat-directory.js";
import { readChatWith } from "./chat-reading.js";
import type { ChatStore } from "./chat-store.js";
import {
  checkLogMessages,
  checkLogSequence,
  decodeLogMessage,
  decodeTranscript,
  encodeTranscript,
  type TranscriptDecoding,
  type TranscriptFile,
} from "./transcript-file.js";

/** Options of {@link createIndexedDbChatStore}. */
export interface IndexedDbChatStoreOptions {
  /** The database's name. Default: `"conch-chats"`. */
  readonly databaseName?: string;
  /** The IndexedDB to use. Default: `globalThis.indexedDB`. */
  readonly indexedDB?: IDBFactory;
}

/** A {@link ChatStore} in the browser's IndexedDB. */
export interface IndexedDbChatStore extends ChatStore {
  readonly databaseName: string;
  /** The chats in the database, with their titles: a `chats` record per chat, written with each append. */
  readonly directory: ChatDirectory;
  /** Closes the connection (a later call opens it again); lets the database be deleted or upgraded. */
  close(): void;
}

// Chromium commits a transaction with "relaxed" durability unless told otherwise, which may lose it in a power
// cut after it reported success; a chat store reports success only for what is on disk.
const durable: IDBTransactionOptions = { durability: "strict" };

/** The object stores of the database: version 1, and `chats` from version 2. */
const stores = {
  /** Key `chatId`, value {@link ChatRecord}: what the chat list reads, written with each append. */
  chats: "chats",
  /** Key `[chatId, seq]`, value the message. */
  log: "log",
  /** Key `chatId`, value the transcript's JSON text, as the file would hold it. */
  transcripts: "transcripts",
  /** Auto-increment key, value {@link IndexedDbCorruptRecord}: unreadable transcripts, moved here. */
  corrupt: "corrupt",
} as const;

/** What the `chats` object store keeps of each chat. */
interface ChatRecord {
  readonly id: string;
  /** When its log last grew, in milliseconds since the epoch. */
  readonly updated: number;
  /** The first words of its first message, or null. */
  readonly firstWords: string | null;
  /** The person's title, once renamed. */
  readonly title?: string;
}

/** What the `corrupt` object store keeps of a transcript that could not be read. */
export interface IndexedDbCorruptRecord {
  readonly chatId: string;
  readonly store: "transcripts";
  /** The stored value exactly as it was. */
  readonly raw: unknown;
  readonly reason: string;
  /** Milliseconds since the epoch. */
  readonly at: number;
}

/**
 * A {@link ChatStore} in IndexedDB. A log append is one transaction (all its messages or none) that checks the
 * seq against the stored log, so two tabs cannot both append the same seq. A transcript is stored as its JSON
 * text and replaced in one put, so it is whole; an unreadable one is moved to the `corrupt` object store.
 */
export function createIndexedDbChatStore(options: IndexedDbChatStoreOptions = {}): IndexedDbChatStore {
  const databaseName = options.databaseName ?? "conch-chats";
  const queue = createChatQueue();
  let opening: Promise<IDBDatabase> | undefined;

  function database(): Promise<IDBDatabase> {
    opening ??= openDatabase(databaseName, options.indexedDB).catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  }

  const location = (store: string, chatId: string): string => `indexeddb://${databaseName}/${store}/${chatId}`;

  /**
   * Runs one storage step; what IndexedDB throws (a DOMException, or the store's "unavailable") comes out as the
   * store's typed error. The engine's own errors (a wrong seq, a refused record) pass as they are. A connection
   * closed under it (another tab upgrading or deleting the database) is dropped, so the next call opens again.
   */
  async function storage<T>(kind: "read" | "write", chatId: string, where: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (EngineClientError.isInstance(error) && error.name !== unavailableName) throw error;
      if (error instanceof Error && error.name === "InvalidStateError") opening = undefined;
      throw kind === "read"
        ? new ChatStoreReadError({ chatId, location: where, cause: error })
        : new ChatStoreWriteError({ chatId, location: where, cause: error });
    }
  }

  /** The messages with seqs from `from` to `to` (excluded), each checked as the message at its place. */
  async function logRange(chatId: string, from: number, to: number): Promise<ChatMessage[]> {
    const where = location(stores.log, chatId);
    const values = await storage("read", chatId, where, async (): Promise<unknown[]> => {
      const db = await database();
      const transaction = db.transaction(stores.log, "readonly");
      return requestResult(transaction.objectStore(stores.log).getAll(seqRange(chatId, from, to)));
    });
    const messages: ChatMessage[] = [];
    for (const [index, value] of values.entries()) {
      const decoded = decodeLogMessage(value, from + index);
      if (!decoded.ok) {
        throw unreadableLogLine({
          chatId,
          location: where,
          line: from + index + 1,
          reason: decoded.reason,
          cause: decoded.cause,
        });
      }
      messages.push(decoded.message);
    }
    return messages;
  }

  /** The chat's transcript, or null; one that does not pass `check` is moved to the `corrupt` object store. */
  async function transcriptOf(
    chatId: string,
    check: ((file: TranscriptFile) => string | null) | undefined,
  ): Promise<TranscriptFile | null> {
    const where = location(stores.transcripts, chatId);
    // One read-write transaction: what is moved aside is exactly what was read, even with another tab
    // writing this chat's transcript at the same moment.
    const { transaction, raw } = await storage("read", chatId, where, async () => {
      const db = await database();
      const transaction = db.transaction([stores.transcripts, stores.corrupt], "readwrite", durable);
      const raw: unknown = await requestResult(transaction.objectStore(stores.transcripts).get(chatId));
      return { transaction, raw };
    });
    if (raw === undefined) return null;
    const decoded: TranscriptDecoding =
      typeof raw === "string" ? decodeTranscript(chatId, raw, check) : { ok: false, reason: "it is not JSON text" };
    if (decoded.ok) return decoded.file;

    const record: IndexedDbCorruptRecord = {
      chatId,
      store: "transcripts",
      raw,
      reason: decoded.reason,
      at: Date.now(),
    };
    let keptAt = where;
    let cause = decoded.cause;
    try {
      const done = transactionDone(transaction);
      const key = await requestResult(transaction.objectStore(stores.corrupt).add(record));
      transaction.objectStore(stores.transcripts).delete(chatId);
      await done;
      keptAt = `indexeddb://${databaseName}/${stores.corrupt}/${String(key)}`;
    } catch (error) {
      // Not moved (storage full, say): left where it is, as the file store does.
      cause = new AggregateError([decoded.cause, error], "could not move the transcript aside");
    }
    throw new TranscriptCorruptError({ chatId, location: where, keptAt, reason: decoded.reason, cause });
  }

  const directory: ChatDirectory = {
    list: (page) =>
      storage("read", "(the list)", `indexeddb://${databaseName}/${stores.chats}`, async () => {
        const db = await database();
        const records = (await requestResult(
          db.transaction(stores.chats, "readonly").objectStore(stores.chats).getAll(),
        )) as ChatRecord[];
        const byId = new Map(records.map((record) => [record.id, record]));
        const sorted = records.map(({ id, updated }) => ({ id, updated })).sort(newestFirst);
        return pageOf(sorted, page, (id) => {
          const record = byId.get(id);
          return record?.title ?? record?.firstWords ?? id;
        });
      }),

    async rename(chatId, title) {
      assertSafeChatId(chatId);
      const kept = checkedTitle(chatId, title);
      return queue.run(chatId, () =>
        storage("write", chatId, location(stores.chats, chatId), async () => {
          const db = await database();
          const transaction = db.transaction(stores.chats, "readwrite", durable);
          const done = transactionDone(transaction);
          const chats = transaction.objectStore(stores.chats);
          const record = (await requestResult(chats.get(chatId))) as ChatRecord | undefined;
          if (record) chats.put({ ...record, title: kept } satisfies ChatRecord, chatId);
          await done;
          return record !== undefined;
        }),
      );
    },

    async remove(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, () =>
        storage("write", chatId, location(stores.chats, chatId), async () => {
          const db = await database();
          const transaction = db.transaction([stores.log, stores.transcripts, stores.chats], "readwrite", durable);
          const done = transactionDone(transaction);
          const log = transaction.objectStore(stores.log);
          const transcripts = transaction.objectStore(stores.transcripts);
          const chats = transaction.objectStore(stores.chats);
          const existed =
            (await nextSeqIn(log, chatId)) > 0 ||
            (await requestResult(transcripts.count(chatId))) > 0 ||
            (await requestResult(chats.count(chatId))) > 0;
          log.delete(seqRange(chatId, 0, Number.POSITIVE_INFINITY));
          transcripts.delete(chatId);
          chats.delete(chatId);
          await done;
          return existed;
        }),
      );
    },
  };

  return {
    databaseName,

    close() {
      const current = opening;
      opening = undefined;
      void current?.then((db) => db.close()).catch(() => undefined);
    },

    async readLog(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, () => logRange(chatId, 0, Number.POSITIVE_INFINITY));
    },

    async readChat(chatId, options) {
      assertSafeChatId(chatId);
      return queue.run(chatId, () =>
        readChatWith(
          {
            chatId,
            async head(check) {
              const where = location(stores.log, chatId);
              const nextSeq = await storage("read", chatId, where, async () => {
                const db = await database();
                const transaction = db.transaction(stores.log, "readonly");
                return nextSeqIn(transaction.objectStore(stores.log), chatId);
              });
              return { nextSeq, transcript: await transcriptOf(chatId, check && ((file) => check(file, nextSeq))) };
            },
            range: (from, to) => logRange(chatId, from, to),
          },
          options,
        ),
      );
    },

    async appendLog(chatId, messages) {
      assertSafeChatId(chatId);
      const checked = checkLogMessages(chatId, messages);
      return queue.run(chatId, () =>
        storage("write", chatId, location(stores.log, chatId), async () => {
          const db = await database();
          const transaction = db.transaction([stores.log, stores.chats], "readwrite", durable);
          const done = transactionDone(transaction);
          const store = transaction.objectStore(stores.log);
          try {
            const nextSeq = await nextSeqIn(store, chatId);
            checkLogSequence(chatId, nextSeq, checked);
            if (checked.length === 0) return;
            // `add`, not `put`: a seq already there fails the whole transaction instead of overwriting it.
            for (const message of checked) store.add(message, [chatId, message.seq]);
            // The list's record, in the same transaction: a chat is listed exactly when its log holds a message.
            const chats = transaction.objectStore(stores.chats);
            const before = (await requestResult(chats.get(chatId))) as ChatRecord | undefined;
            const record: ChatRecord = {
              ...before,
              id: chatId,
              updated: Date.now(),
              firstWords: nextSeq === 0 ? firstWordsTitle(checked[0]) : (before?.firstWords ?? null),
            };
            chats.put(record, chatId);
          } catch (error) {
            try {
              transaction.abort();
            } catch {
              // Already aborting because the failed request aborted it.
            }
            await done.catch(() => undefined);
            throw error;
          }
          await done;
        }),
      );
    },

    async readTranscript(chatId, options) {
      assertSafeChatId(chatId);
      return queue.run(chatId, () => transcriptOf(chatId, options?.check));
    },

    async writeTranscript(chatId, file) {
      assertSafeChatId(chatId);
      const json = encodeTranscript(chatId, file);
      return queue.run(chatId, () =>
        storage("write", chatId, location(stores.transcripts, chatId), async () => {
          const db = await database();
          const transaction = db.transaction(stores.transcripts, "readwrite", durable);
          const done = transactionDone(transaction);
          transaction.objectStore(stores.transcripts).put(json, chatId);
          await done;
        }),
      );
    },

    async transcriptBytes(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, () =>
        storage("read", chatId, location(stores.transcripts, chatId), async () => {
          const db = await database();
          const raw: unknown = await requestResult(
            db.transaction(stores.transcripts, "readonly").objectStore(stores.transcripts).get(chatId),
          );
          return typeof raw === "string" ? utf8Length(raw) : 0;
        }),
      );
    },

    directory,
  };
}

const unavailableName = "IndexedDbUnavailableError";

function openDatabase(name: string, factory: IDBFactory | undefined): Promise<IDBDatabase> {
  const indexedDB = factory ?? globalThis.indexedDB;
  if (indexedDB === undefined) {
    return Promise.reject(new EngineClientError({ name: unavailableName, message: "IndexedDB is not available here" }));
  }
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name, 2);
    request.onupgradeneeded = (event) => {
      const db = request.result;
      if (event.oldVersion < 1) {
        db.createObjectStore(stores.log);
        db.createObjectStore(stores.transcripts);
        db.createObjectStore(stores.corrupt, { autoIncrement: true });
      }
      if (event.oldVersion < 2) {
        db.createObjectStore(stores.chats);
        // Chats written at version 1 are listed too: one pass over the log, in the upgrade's own transaction.
        if (event.oldVersion >= 1 && request.transaction) listLoggedChats(request.transaction);
      }
    };
    request.onsuccess = () => {
      const db = request.result;
      // Another tab upgrading or deleting the database must not wait for this one forever.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    request.onerror = () => reject(request.error);
  });
}

/**
 * Writes a `chats` record for each chat in the log, as the upgrade to version 2 does: its first words from seq 0,
 * its last change from its newest message's `createdAt` (else 0: listed last).
 */
function listLoggedChats(transaction: IDBTransaction): void {
  const chats = transaction.objectStore(stores.chats);
  const records = new Map<string, { id: string; updated: number; firstWords: string | null }>();
  const cursorRequest = transaction.objectStore(stores.log).openCursor();
  cursorRequest.onsuccess = () => {
    const cursor = cursorRequest.result;
    if (cursor === null) {
      for (const record of records.values()) chats.put(record satisfies ChatRecord, record.id);
      return;
    }
    const [chatId, seq] = cursor.key as [string, number];
    const value = cursor.value as Partial<ChatMessage> | undefined;
    const record = records.get(chatId) ?? { id: chatId, updated: 0, firstWords: null };
    if (seq === 0 && Array.isArray(value?.parts)) record.firstWords = firstWordsTitle({ parts: value.parts });
    if (typeof value?.createdAt === "number") record.updated = Math.max(record.updated, value.createdAt);
    records.set(chatId, record);
    cursor.continue();
  };
}

/** The keys of a chat's log from seq `from` to `to` (excluded). */
function seqRange(chatId: string, from: number, to: number): IDBKeyRange {
  return IDBKeyRange.bound([chatId, from], [chatId, to], false, true);
}

/** The seq the chat's next message takes: one past the last key. */
async function nextSeqIn(store: IDBObjectStore, chatId: string): Promise<number> {
  const last = await requestResult(store.openKeyCursor(seqRange(chatId, 0, Number.POSITIVE_INFINITY), "prev"));
  return last === null ? 0 : (last.key as [string, number])[1] + 1;
}

function requestResult<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Settles when the transaction commits or aborts; handled from the start, as a failed request may come first. */
function transactionDone(transaction: IDBTransaction): Promise<void> {
  const done = new Promise<void>((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onabort = () => reject(transaction.error ?? new DOMException("Transaction aborted", "AbortError"));
  });
  done.catch(() => undefined);
  return done;
}
