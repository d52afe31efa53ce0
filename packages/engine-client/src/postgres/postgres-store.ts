import { utf8Length } from "../context/estimate.js";
import {
  assertSafeChatId,
  ChatStoreReadError,
  TranscriptCorruptError,
  TurnSequenceError,
  unreadableLogLine,
} from "../errors.js";
import { createChatQueue } from "../kit/chat-queue.js";
import type { ChatMessage } from "../messages.js";
import type { ChatDirectory } from "../transcript/chat-directory.js";
import { readChatWith } from "../transcript/chat-reading.js";
import type { ChatStore } from "../transcript/chat-store.js";
import {
  checkLogMessages,
  checkLogSequence,
  decodeLogMessage,
  decodeTranscript,
  encodeTranscript,
  type TranscriptFile,
} from "../transcript/transcript-file.js";
import { postgresChatDirectory } from "./chat-directory.js";
import { fairEmbedded } from "./fair-embedded.js";
import { checkSchema } from "./migrate.js";
import { inTransaction, isEmbedded, type SqlDatabase } from "./sql.js";

/** Options of {@link createPostgresChatStore}. */
export interface PostgresChatStoreOptions {
  /** A `pg` `Pool` or a PGlite instance, migrated with `migrate(db)`. */
  readonly db: SqlDatabase;
  /** Whose chats these are: every row is keyed by it, so one person never reads another's. Default `"local"`. */
  readonly userId?: string;
}

/** One chat of a person, as {@link PostgresChatStore.listChats} lists it. */
export interface StoredChat {
  readonly chatId: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A {@link ChatStore} in Postgres (a real server or PGlite), with what only a database can do on top. */
export interface PostgresChatStore extends ChatStore {
  /** The database it was given. */
  readonly db: SqlDatabase;
  readonly userId: string;
  /** Appends a turn's messages and replaces the transcript in one transaction: both or neither. */
  writeTurn(chatId: string, messages: readonly ChatMessage[], file: TranscriptFile): Promise<void>;
  /** The person's chats, most recently changed first. */
  listChats(options?: { readonly limit?: number; readonly offset?: number }): Promise<StoredChat[]>;
  /** Removes a chat whole: its log, transcript, title, lease and running-turn events. */
  deleteChat(chatId: string): Promise<void>;
  /** The person's chats: listed with titles (a rename kept in `conch_chats.title`), renamed, removed. */
  readonly directory: ChatDirectory;
}

const uniqueViolation = "23505";

/**
 * The chat's next seq (0 for none), for statements whose $1 and $2 are the person and the chat: the last row by the
 * primary key, one index step. `max(seq)` is not that: on a table not yet analysed (new rows, a new database) the
 * planner aggregates every row of the chat, 5.8 ms at 10,000 messages against 0.09 ms at 200, on every read and append.
 */
const nextSeqOf =
  "coalesce((select seq + 1 from conch_messages where user_id = $1 and chat_id = $2 order by seq desc limit 1), 0)";

/**
 * A {@link ChatStore} whose chats live in Postgres: a log row per message keyed by (person, chat, seq), so a seq
 * can be stored once only, and a transcript row per chat replaced in one statement. Appends lock the chat's row,
 * so several instances appending to one chat are serialised by the database, not by this process; calls made on
 * one store object also run one after another per chat, in call order, as every store's do.
 */
export function createPostgresChatStore(options: PostgresChatStoreOptions): PostgresChatStore {
  const given = options.db;
  // On PGlite, statements take their turn in one line per database (fair-embedded.ts).
  const db = isEmbedded(given) ? fairEmbedded(given) : given;
  const userId = options.userId ?? "local";
  const queue = createChatQueue();
  const run = <T>(chatId: string, task: () => Promise<T>): Promise<T> =>
    queue.run(chatId, async () => {
      await checkSchema(given);
      return task();
    });
  const where = (table: string, chatId: string) => `postgres://${table}/${encodeURIComponent(userId)}/${chatId}`;
  // Built once the store exists: its removal is the store's own `deleteChat`.
  let store: PostgresChatStore;
  const directory = postgresChatDirectory({
    db,
    userId,
    run,
    deleteChat: (chatId) => store.deleteChat(chatId),
  });

  /**
   * The log's messages with seqs from `from` to `to` (excluded), in seq order, read the way that is quicker for
   * the driver (measured on 2,000 messages, ~1 MB): from `pg`, rows in the primary key's order (no sort), about
   * half the time of one aggregated text, whose ordered `string_agg` sorts on the server; from PGlite, one
   * aggregated text, about half the time of 2,000 rows through its WASM boundary.
   */
  function readRange(chatId: string, from: number, to: number): Promise<ChatMessage[]> {
    return isEmbedded(db) ? readRangeAsOneText(chatId, from, to) : readRangeRows(chatId, from, to);
  }

  /** The bounds as parameters: `to` past any seq stands for the log's end. */
  const bounds = (from: number, to: number) => [from, Math.min(to, 2_147_483_647)];

  async function readRangeAsOneText(chatId: string, from: number, to: number): Promise<ChatMessage[]> {
    const location = where("conch_messages", chatId);
    let row: Record<string, unknown> | undefined;
    try {
      ({
        rows: [row],
      } = await db.query(
        `select array_agg(seq order by seq) as seqs, '[' || string_agg(message, ',' order by seq) || ']' as messages
         from conch_messages where user_id = $1 and chat_id = $2 and seq >= $3 and seq < $4`,
        [userId, chatId, ...bounds(from, to)],
      ));
    } catch (error) {
      throw new ChatStoreReadError({ chatId, location, cause: error });
    }
    const seqs = (row?.seqs ?? null) as number[] | null;
    if (seqs === null) return [];
    let values: unknown[] | undefined;
    try {
      values = JSON.parse(String(row?.messages)) as unknown[];
    } catch {
      // Some row is not JSON (edited by hand): read them one by one to name it.
    }
    if (values === undefined || values.length !== seqs.length) return readRangeRows(chatId, from, to);
    return seqs.map((seq, index) => decodeRow(chatId, location, from + index, seq, values[index]));
  }

  async function readRangeRows(chatId: string, from: number, to: number): Promise<ChatMessage[]> {
    const location = where("conch_messages", chatId);
    let rows: Record<string, unknown>[];
    try {
      ({ rows } = await db.query(
        "select seq, message from conch_messages where user_id = $1 and chat_id = $2 and seq >= $3 and seq < $4 order by seq",
        [userId, chatId, ...bounds(from, to)],
      ));
    } catch (error) {
      throw new ChatStoreReadError({ chatId, location, cause: error });
    }
    return rows.map((row, index) => {
      let value: unknown;
      try {
        value = JSON.parse(String(row.message));
      } catch (cause) {
        throw unreadableLogLine({ chatId, location, line: from + index + 1, reason: "the message is not JSON", cause });
      }
      return decodeRow(chatId, location, from + index, Number(row.seq), value);
    });
  }

  /**
   * The log's length and the transcript in one statement; a transcript that does not pass `check` (given that
   * length) is moved aside.
   */
  async function readHead(
    chatId: string,
    check: ((file: TranscriptFile, nextSeq: number) => string | null) | undefined,
  ): Promise<{ nextSeq: number; transcript: TranscriptFile | null }> {
    const location = where("conch_transcripts", chatId);
    let rows: Record<string, unknown>[];
    try {
      ({ rows } = await db.query(
        `select ${nextSeqOf} as next,
           (select body from conch_transcripts where user_id = $1 and chat_id = $2) as body`,
        [userId, chatId],
      ));
    } catch (error) {
      throw new ChatStoreReadError({ chatId, location, cause: error });
    }
    const nextSeq = Number(rows[0]?.next ?? 0);
    const body = rows[0]?.body;
    if (body === null || body === undefined) return { nextSeq, transcript: null };
    return { nextSeq, transcript: await decodeStored(chatId, String(body), check && ((file) => check(file, nextSeq))) };
  }

  /** A stored transcript read back; one that does not decode or pass `check` is moved aside. */
  async function decodeStored(
    chatId: string,
    body: string,
    check: ((file: TranscriptFile) => string | null) | undefined,
  ): Promise<TranscriptFile> {
    const decoded = decodeTranscript(chatId, body, check);
    if (decoded.ok) return decoded.file;
    const location = where("conch_transcripts", chatId);
    const keptAt = await moveAside(chatId, body, decoded.reason).catch(() => location);
    throw new TranscriptCorruptError({ chatId, location, keptAt, reason: decoded.reason, cause: decoded.cause });
  }

  /**
   * One statement: the chat's row upserted (and so locked until the end of the transaction), the next seq read,
   * the messages inserted only if they start there, and, with `file`, the transcript replaced only if they were:
   * a turn's answer and transcript together or neither, with no transaction around them (one statement is one).
   * Two writers racing on one seq: the primary key refuses the second, which is then a TurnSequenceError like any
   * stale seq.
   */
  async function append(
    chatId: string,
    messages: readonly ChatMessage[],
    file?: { readonly file: TranscriptFile; readonly json: string },
  ): Promise<void> {
    const first = messages[0]!.seq;
    // The transcript's columns take $8 on; its row goes in only when every message did.
    const transcript = file
      ? `, transcript as (${transcriptUpsert(8, "chat where (select count(*) from added) = cardinality($3::integer[])")})`
      : "";
    let rows: Record<string, unknown>[];
    try {
      ({ rows } = await db.query(
        `with chat as (
           insert into conch_chats (user_id, chat_id) values ($1, $2)
           on conflict (user_id, chat_id) do update set updated_at = now() returning 1
         ), next as (
           select ${nextSeqOf} as seq
         ), added as (
           insert into conch_messages (user_id, chat_id, seq, role, message, parent)
           select $1, $2, t.seq, t.role, t.message, t.parent
           from unnest($3::integer[], $4::text[], $5::text[], $7::integer[]) as t(seq, role, message, parent), next
           where next.seq = $6 and exists (select 1 from chat)
           returning 1
         )${transcript}
         select (select seq from next) as next, (select count(*) from added)::integer as added`,
        [
          userId,
          chatId,
          messages.map((message) => message.seq),
          messages.map((message) => message.role),
          messages.map((message) => JSON.stringify(message)),
          first,
          // A column of its own only where it is not the message before (a fork): null reads as seq - 1.
          messages.map((message) =>
            message.parent === undefined || message.parent === message.seq - 1 ? null : message.parent,
          ),
          ...(file ? transcriptValues(file.file, file.json) : []),
        ],
      ));
    } catch (error) {
      if (sqlState(error) === uniqueViolation) {
        throw new TurnSequenceError({ chatId, expectedSeq: first + 1, actualSeq: first });
      }
      throw error;
    }
    if (Number(rows[0]?.added) !== messages.length) {
      throw new TurnSequenceError({ chatId, expectedSeq: Number(rows[0]?.next ?? 0), actualSeq: first });
    }
  }

  /** The transcript's row, its columns from parameter `$at` on ({@link transcriptValues}), selected `from`. */
  function transcriptUpsert(at: number, from: string): string {
    const values = Array.from({ length: 8 }, (_, index) => `$${at + index}`);
    values[2] = `${values[2]}::integer[]`;
    return `insert into conch_transcripts
         (user_id, chat_id, body, bytes, kept_seqs, summary, factor, read_until, health, active_leaf)
       select $1, $2, ${values.join(", ")} from ${from}
       on conflict (user_id, chat_id) do update set body = excluded.body, bytes = excluded.bytes,
         kept_seqs = excluded.kept_seqs, summary = excluded.summary, factor = excluded.factor,
         read_until = excluded.read_until, health = excluded.health, active_leaf = excluded.active_leaf,
         written_at = now()
       returning 1`;
  }

  function transcriptValues(file: TranscriptFile, json: string): unknown[] {
    const readUntil = file.readUntil;
    return [
      json,
      utf8Length(json),
      file.seqs === undefined ? null : [...file.seqs],
      file.summary === undefined ? null : JSON.stringify(file.summary),
      file.factor ?? null,
      Number.isSafeInteger(readUntil) ? readUntil : null,
      file.health === undefined ? null : JSON.stringify(file.health),
      // Null for a chat that never branched: its leaf is the log's last message.
      file.branches?.activeLeaf ?? null,
    ];
  }

  async function putTranscript(chatId: string, file: TranscriptFile, json: string): Promise<void> {
    // The chat's row in the same statement: its foreign key is checked at the statement's end. A transcript alone (a
    // fold, one ahead of the need in the background included) leaves the chat's place in the list: only a message
    // moves it, as on the file store.
    await db.query(
      `with chat as (
         insert into conch_chats (user_id, chat_id) values ($1, $2)
         on conflict (user_id, chat_id) do update set updated_at = conch_chats.updated_at returning 1
       )
       ${transcriptUpsert(3, "chat")}`,
      [userId, chatId, ...transcriptValues(file, json)],
    );
  }

  store = {
    directory,
    db: given,
    userId,

    async readLog(chatId) {
      assertSafeChatId(chatId);
      return run(chatId, () => readRange(chatId, 0, Number.POSITIVE_INFINITY));
    },

    async readChat(chatId, options) {
      assertSafeChatId(chatId);
      return run(chatId, () =>
        readChatWith(
          { chatId, head: (check) => readHead(chatId, check), range: (from, to) => readRange(chatId, from, to) },
          options,
        ),
      );
    },

    async appendLog(chatId, messages) {
      assertSafeChatId(chatId);
      const checked = checkLogMessages(chatId, messages);
      if (checked.length > 0) checkLogSequence(chatId, checked[0]!.seq, checked);
      return run(chatId, async () => {
        if (checked.length > 0) await append(chatId, checked);
      });
    },

    async readTranscript(chatId, options) {
      assertSafeChatId(chatId);
      return run(chatId, async () => {
        const location = where("conch_transcripts", chatId);
        let rows: Record<string, unknown>[];
        try {
          ({ rows } = await db.query("select body from conch_transcripts where user_id = $1 and chat_id = $2", [
            userId,
            chatId,
          ]));
        } catch (error) {
          throw new ChatStoreReadError({ chatId, location, cause: error });
        }
        if (rows.length === 0) return null;
        return decodeStored(chatId, String(rows[0]?.body), options?.check);
      });
    },

    async writeTranscript(chatId, file) {
      assertSafeChatId(chatId);
      const json = encodeTranscript(chatId, file);
      return run(chatId, () => putTranscript(chatId, file, json));
    },

    async writeTurn(chatId, messages, file) {
      assertSafeChatId(chatId);
      const checked = checkLogMessages(chatId, messages);
      if (checked.length > 0) checkLogSequence(chatId, checked[0]!.seq, checked);
      const json = encodeTranscript(chatId, file);
      return run(chatId, () =>
        checked.length > 0 ? append(chatId, checked, { file, json }) : putTranscript(chatId, file, json),
      );
    },

    async transcriptBytes(chatId) {
      assertSafeChatId(chatId);
      return run(chatId, async () => {
        const { rows } = await db.query("select bytes from conch_transcripts where user_id = $1 and chat_id = $2", [
          userId,
          chatId,
        ]);
        return rows.length === 0 ? 0 : Number(rows[0]?.bytes);
      });
    },

    async listChats(list = {}) {
      await checkSchema(given);
      const { rows } = await db.query(
        `select chat_id, extract(epoch from created_at)::float8 * 1000 as created,
           extract(epoch from updated_at)::float8 * 1000 as updated
         from conch_chats where user_id = $1 order by updated_at desc, chat_id limit $2 offset $3`,
        [userId, list.limit ?? 100, list.offset ?? 0],
      );
      return rows.map((row) => ({
        chatId: String(row.chat_id),
        createdAt: Math.round(Number(row.created)),
        updatedAt: Math.round(Number(row.updated)),
      }));
    },

    async deleteChat(chatId) {
      assertSafeChatId(chatId);
      return run(chatId, () =>
        inTransaction(db, async (tx) => {
          const key = [userId, chatId];
          await tx.query("delete from conch_turn_events where user_id = $1 and chat_id = $2", key);
          await tx.query("delete from conch_leases where user_id = $1 and chat_id = $2", key);
          await tx.query("delete from conch_chats where user_id = $1 and chat_id = $2", key);
        }),
      );
    },
  };
  return store;

  /** Moves an unreadable transcript to conch_corrupt (kept, never read again) and says where. */
  async function moveAside(chatId: string, raw: string, reason: string): Promise<string> {
    return inTransaction(db, async (tx) => {
      const { rows } = await tx.query(
        `insert into conch_corrupt (user_id, chat_id, record, raw, reason) values ($1, $2, 'transcript', $3, $4)
         returning id`,
        [userId, chatId, raw, reason],
      );
      await tx.query("delete from conch_transcripts where user_id = $1 and chat_id = $2", [userId, chatId]);
      return `postgres://conch_corrupt/${String(rows[0]?.id)}`;
    });
  }
}

function decodeRow(chatId: string, location: string, index: number, seq: number, value: unknown): ChatMessage {
  const decoded = decodeLogMessage(value, index);
  if (!decoded.ok || Number(seq) !== index) {
    const reason = decoded.ok ? `row seq ${String(seq)} holds the message at ${index}` : decoded.reason;
    throw unreadableLogLine({
      chatId,
      location,
      line: index + 1,
      reason,
      cause: decoded.ok ? undefined : decoded.cause,
    });
  }
  return decoded.message;
}

/** The SQLSTATE of a database error (`pg` and PGlite both put it on `code`). */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
