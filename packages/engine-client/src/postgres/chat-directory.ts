import type { ChatDirectory } from "../server/chat-directory.js";
import { checkSchema } from "./migrate.js";
import type { PostgresChatStore } from "./postgres-store.js";

const titleLength = 80;

/** The first line of a message's first text part, cut to the title's length; null when it has none. */
function titleOf(message: string): string | null {
  try {
    const parts = (JSON.parse(message) as { parts?: unknown }).parts;
    const text = Array.isArray(parts)
      ? (parts as { type?: unknown; text?: unknown }[]).find(
          (part) => part.type === "text" && typeof part.text === "string",
        )?.text
      : undefined;
    const line = typeof text === "string" ? text.trim().split("\n")[0]?.trim() : undefined;
    if (!line) return null;
    return line.length > titleLength ? `${line.slice(0, titleLength - 1)}…` : line;
  } catch {
    // A row edited by hand: the id will do.
    return null;
  }
}

/**
 * A person's chats in Postgres as the server's {@link ChatDirectory} (`GET /chats`, `DELETE /chats/{id}`): the
 * chats that hold a message, newest change first, titled by the first message, in one query per page.
 */
export function createPostgresChatDirectory(store: PostgresChatStore): ChatDirectory {
  const { db, userId } = store;
  return {
    async list({ offset, limit }) {
      await checkSchema(db);
      const { rows } = await db.query(
        `select c.chat_id, extract(epoch from c.updated_at)::float8 * 1000 as updated, m.message,
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
          return { id, title: titleOf(String(row.message)) ?? id, updated: Math.round(Number(row.updated)) };
        }),
        total,
      };
    },
    async remove(chatId) {
      // A chat is what was written to it: a row alone (a lease's, this delete's own) is no chat.
      const { rows } = await db.query(
        `select 1 from conch_messages where user_id = $1 and chat_id = $2
         union all select 1 from conch_transcripts where user_id = $1 and chat_id = $2 limit 1`,
        [userId, chatId],
      );
      if (rows.length === 0) return false;
      await store.deleteChat(chatId);
      return true;
    },
  };
}
