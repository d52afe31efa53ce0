/**
 * The little of a Postgres client the stores use: plain parameterised SQL, rows back. A `pg` `Pool` and a PGlite
 * instance both satisfy {@link SqlDatabase} as they are, so the embedded default and a real server run the same
 * statements. Nothing here imports either library.
 */

/** One row as the driver returns it. */
export type SqlRow = Record<string, unknown>;

/** Runs one statement (`$1`, `$2`, ... for `params`). */
export interface SqlQueryable {
  query(text: string, params?: unknown[]): Promise<{ rows: SqlRow[] }>;
}

/** A `pg` `Pool`: transactions and LISTEN need one connection of it, taken with `connect()`. */
export interface SqlPool extends SqlQueryable {
  connect(): Promise<SqlPoolClient>;
}

/** One connection of a `pg` `Pool`. */
export interface SqlPoolClient extends SqlQueryable {
  release(destroy?: boolean | Error): void;
  on?(event: "notification", listener: (message: { channel: string; payload?: string | undefined }) => void): unknown;
  on?(event: "error", listener: (error: Error) => void): unknown;
}

/** A PGlite instance: one connection, its own transactions, `listen` for NOTIFY. */
export interface SqlEmbedded extends SqlQueryable {
  transaction<T>(callback: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/** What the Postgres stores are given: a `pg` `Pool` or a PGlite instance. */
export type SqlDatabase = SqlPool | SqlEmbedded;

export function isEmbedded(db: SqlDatabase): db is SqlEmbedded {
  return typeof (db as Partial<SqlEmbedded>).transaction === "function";
}

/**
 * Runs `work` in one transaction: committed when it resolves, rolled back when it throws (the error passes on).
 * On a pool, a connection whose rollback failed is destroyed rather than handed back in an unknown state.
 */
export async function inTransaction<T>(db: SqlDatabase, work: (tx: SqlQueryable) => Promise<T>): Promise<T> {
  if (isEmbedded(db)) return db.transaction(work);
  const client = await db.connect();
  let broken: unknown;
  try {
    await client.query("begin");
    const result = await work(client);
    await client.query("commit");
    return result;
  } catch (error) {
    try {
      await client.query("rollback");
    } catch (rollbackError) {
      broken = rollbackError;
    }
    throw error;
  } finally {
    client.release(broken === undefined ? undefined : true);
  }
}

/**
 * The NOTIFY channels of the running turns. A closed list, because `listen` takes no parameter: the name is written
 * into the statement itself.
 */
export type NotifyChannel = "conch_turn_events" | "conch_leases" | "conch_turn_aborts";

/**
 * Calls `onPayload` for every NOTIFY on `channel` until the returned function is called. On a pool this holds one
 * connection for as long as it listens.
 */
export async function listenTo(
  db: SqlDatabase,
  channel: NotifyChannel,
  onPayload: (payload: string) => void,
): Promise<() => Promise<void>> {
  if (isEmbedded(db)) return db.listen(channel, onPayload);
  const client = await db.connect();
  client.on?.("notification", (message) => {
    if (message.channel === channel) onPayload(message.payload ?? "");
  });
  // A listening connection that breaks is dropped by the pool; its listener simply stops hearing (callers poll too).
  client.on?.("error", () => undefined);
  await client.query(`listen ${channel}`);
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    try {
      await client.query(`unlisten ${channel}`);
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
    }
  };
}
