import { assertSafeChatId } from "../errors.js";
import { type ChatDirectory, checkedTitle, firstWordsTitle } from "../transcript/chat-directory.js";
import { checkSchema } from "./migrate.js";
import type { PostgresChatStore } from "./postgres-store.js";
import type { SqlDatabase } from "./sql.js";

/** The first words of a stored message (its JSON text); null when it has none or cannot be read. */
function firstWordsOf(message: string): string | null {
  try {
    const parts = (JSON.parse(message) as { parts?: unknown }).parts;
    return Array.isArray(parts) ? firstWordsTitle({ parts }) : null;
  } catch {
    // A row edited by hand: the id will do.
    return null;
  }
}

/** What the directory needs of the Postgres store: its database and person, and its removal of a chat. */
export interface PostgresDirectoryParts {
  readonly db: SqlDatabase;
  readonly userId: string;
  /** Runs a step in the chat's queue (after the schema check), as the store's own calls run. */
  run<T>(chatId: string, step: () => Promise<T>): Promise<T>;
  deleteChat(chatId: string): Promise<void>;
}

/**
 * A person's chats in Postgres as a {@link ChatDirectory}: the chats that hold a message, newest change first,
 * titled by `conch_chats.title` (a rename) or the first message, in one query per page.
 */
export function postgresChatDirectory(parts: PostgresDirectoryParts): ChatDirectory {
  const { db, userId, run } = parts;
  /** Whether anything was written to the chat: a row alone (a lease's, a delete's own) is no chat. */
  async function written(chatId: string): Promise<boolean> {
    const { rows } = await db.query(
      `select 1 from conch_messages where user_id = $1 and chat_id = $2
       union all select 1 from conch_transcripts where user_id = $1 and chat_id = $2 limit 1`,
      [userId, chatId],
    );
    return rows.length > 0;
  }
  return {
    async list({ offset, limit }) {
      await checkSchema(db);
      const { rows } = await db.query(
        `select c.chat_id, c.title, extract(epoch from c.updated_at)::float8 * 1000 as updated, m.message,
           count(*) over () as total
         from conch_chats c
         join conch_messages m on m.user_id = c.user_id and m.chat_id = c.chat_id and m.seq = 0
         where c.user_id = $1
         order by c.updated_at desc, c.chat_id
         limit $2 offset $3`,
        [userId, limit, offset],
      );
      let total = Number(rows[0]?.total ?? 0);
      if (rows.length === 0 && offset > 0) {
        // Past the end: the count still says how many there are.
        const counted = await db.query(
          `select count(*) as total from conch_chats c
           where c.user_id = $1 and exists (
             select 1 from conch_messages m where m.user_id = c.user_id and m.chat_id = c.chat_id and m.seq = 0)`,
          [userId],
        );
        total = Number(counted.rows[0]?.total ?? 0);
      }
      return {
        chats: rows.map((row) => {
          const id = String(row.chat_id);
          const title = typeof row.title === "string" && row.title ? row.title : firstWordsOf(String(row.message));
          return { id, title: title ?? id, updated: Math.round(Number(row.updated)) };
        }),
        total,
      };
    },

    async rename(chatId, title) {
      assertSafeChatId(chatId);
      const kept = checkedTitle(chatId, title);
      return run(chatId, async () => {
        if (!(await written(chatId))) return false;
        // The title only: a rename is no change of the chat, so its place in the list stays.
        await db.query("update conch_chats set title = $3 where user_id = $1 and chat_id = $2", [userId, chatId, kept]);
        return true;
      });
    },

    async remove(chatId) {
      assertSafeChatId(chatId);
      if (!(await run(chatId, () => written(chatId)))) return false;
      await parts.deleteChat(chatId);
      return true;
    },
  };
}

/**
 * A person's chats in Postgres as the server's {@link ChatDirectory} (`GET /chats`, `PATCH` and `DELETE
 * /chats/{id}`): the store's own `directory`.
 */
export function createPostgresChatDirectory(store: PostgresChatStore): ChatDirectory {
  return store.directory;
}
