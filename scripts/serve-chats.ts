// Where `pnpm serve` keeps chats: the Postgres named by DATABASE_URL (shared by every instance on it), else PGlite
// persisted under NACRE_DATA_DIR (one process). A folder the file store wrote before (NACRE_DATA_DIR/people) is
// imported into PGlite on the first start and then renamed, kept whole, to people.imported-<time>.
import { existsSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { ChatStore } from "@conch/engine-client";
import { createFileChatStore, lockFolder } from "@conch/engine-client/node";
import {
  createPostgresChatDirectory,
  createPostgresChatStore,
  createPostgresRunningTurns,
  importFileChats,
  migrate,
  type PostgresChatStore,
  type SqlDatabase,
} from "@conch/engine-client/postgres";
import type { ChatDirectory, RunningTurns } from "@conch/engine-client/server";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";

export interface ServeChats {
  storeOf(userId: string): ChatStore;
  chatsOf(userId: string): ChatDirectory;
  /** Shared by every instance on the database; undefined: the handler's own, in this process. */
  readonly runningTurns: RunningTurns | undefined;
  /** Where the chats are, in words, for the start-up line. */
  readonly where: string;
  close(): Promise<void>;
}

/** A start-up problem a person can fix: `pnpm serve` prints the message and exits. */
export class ServeChatsError extends Error {
  override readonly name = "ServeChatsError";
}

export async function openServeChats(options: {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly log: (line: string) => void;
  /** How long a chat's lease lasts unless renewed (Postgres only): a dead instance's chats are free after it. */
  readonly leaseMs?: number;
}): Promise<ServeChats> {
  const { dataDir, log } = options;
  const databaseUrl = options.databaseUrl?.trim();
  if (databaseUrl) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    // An idle connection the server dropped: the pool makes a new one; without a listener Node would exit.
    pool.on("error", (error) => log(`a Postgres connection failed (${error.message}); the pool reconnects.`));
    try {
      const { from, to } = await migrate(pool);
      if (from !== to) log(`migrated the chat schema from version ${from} to ${to}.`);
    } catch (error) {
      await pool.end();
      throw error;
    }
    if (existsSync(join(dataDir, "people"))) {
      log(
        `${join(dataDir, "people")} holds chats of the file store; they stay there, not imported into DATABASE_URL ` +
          "(start once without DATABASE_URL to import them into PGlite).",
      );
    }
    const runningTurns = createPostgresRunningTurns({
      db: pool,
      ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    });
    return {
      ...over(pool),
      runningTurns,
      where: `Postgres at ${redactedUrl(databaseUrl)}`,
      async close() {
        await runningTurns.close();
        await pool.end();
      },
    };
  }

  mkdirSync(dataDir, { recursive: true });
  // One process per data folder (two PGlite instances would overwrite each other's pages): the file store's lock.
  const lock = await lockFolder(dataDir);
  let db: PGlite | undefined;
  try {
    db = new PGlite(join(dataDir, "pglite"));
    await db.waitReady;
    const { from, to } = await migrate(db);
    if (from !== to) log(`migrated the chat schema in ${join(dataDir, "pglite")} from version ${from} to ${to}.`);
    await importFileStore(db, dataDir, log);
  } catch (error) {
    await db?.close().catch(() => undefined);
    await lock.release();
    throw error;
  }
  const opened = db;
  return {
    ...over(opened),
    runningTurns: undefined,
    where: `PGlite in ${join(dataDir, "pglite")}`,
    async close() {
      await opened.close();
      await lock.release();
    },
  };
}

function over(db: SqlDatabase): Pick<ServeChats, "storeOf" | "chatsOf"> {
  const stores = new Map<string, PostgresChatStore>();
  const storeOf = (userId: string) => {
    let store = stores.get(userId);
    if (!store) {
      store = createPostgresChatStore({ db, userId });
      stores.set(userId, store);
    }
    return store;
  };
  return { storeOf, chatsOf: (userId) => createPostgresChatDirectory(storeOf(userId)) };
}

/** Imports NACRE_DATA_DIR/people/<person>/ (the file store's folders) and renames it once every chat is in. */
async function importFileStore(db: PGlite, dataDir: string, log: (line: string) => void): Promise<void> {
  const people = join(dataDir, "people");
  if (!existsSync(people)) return;
  let count = 0;
  for (const entry of readdirSync(people, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const from = createFileChatStore({ root: join(people, entry.name) });
    const into = createPostgresChatStore({ db, userId: entry.name });
    const done = await importFileChats({ from, into }).finally(() => from.close());
    count += done.imported.length;
    if (done.repaired.length > 0) {
      log(`imported ${done.repaired.join(", ")} of ${entry.name} as far as readable; the bad bytes are kept beside.`);
    }
  }
  const keptAt = `${people}.imported-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  renameSync(people, keptAt);
  log(`imported ${count} chats of the file store into PGlite; the files are kept, unused, in ${keptAt}.`);
}

/** The URL without its password, for the log. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "DATABASE_URL";
  }
}
