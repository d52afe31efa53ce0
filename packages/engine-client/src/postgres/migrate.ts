import { SchemaNotMigratedError, SchemaTooNewError } from "../errors.js";
import { inTransaction, type SqlDatabase, type SqlQueryable } from "./sql.js";

/**
 * The schema, one step per version; a step never changes once released (a later change is a new step). Every
 * table is keyed by the person (`user_id`) first: the same chat id is a different chat for each person.
 *
 * Messages and transcripts are kept as JSON text, not `jsonb`: `jsonb` refuses `\u0000` (a thinking signature may
 * hold one) and reorders keys, and the text is what `transcriptBytes` measures.
 */
const steps: readonly (readonly string[])[] = [
  [
    `create table conch_chats (
      user_id text not null,
      chat_id text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      -- The id of the chat's next running-turn event; never goes back, so a resume cursor is never reused.
      next_event_id bigint not null default 1,
      primary key (user_id, chat_id)
    )`,
    `create index conch_chats_by_update on conch_chats (user_id, updated_at desc)`,
    `create table conch_messages (
      user_id text not null,
      chat_id text not null,
      seq integer not null check (seq >= 0),
      role text not null check (role in ('user', 'assistant', 'tool')),
      message text not null,
      stored_at timestamptz not null default now(),
      primary key (user_id, chat_id, seq),
      foreign key (user_id, chat_id) references conch_chats on delete cascade
    )`,
    // body is the transcript as stored, the one truth; the columns beside it are copies of its fields, written
    // in the same statement, for people and queries (which chats folded, their factor, what the learner read).
    `create table conch_transcripts (
      user_id text not null,
      chat_id text not null,
      body text not null,
      bytes integer not null check (bytes >= 0),
      kept_seqs integer[],
      summary text,
      factor double precision,
      read_until integer,
      health text,
      written_at timestamptz not null default now(),
      primary key (user_id, chat_id),
      foreign key (user_id, chat_id) references conch_chats on delete cascade
    )`,
    // Records moved aside because they could not be read (the transcript is rebuilt from the log).
    `create table conch_corrupt (
      id bigserial primary key,
      user_id text not null,
      chat_id text not null,
      record text not null,
      raw text not null,
      reason text not null,
      moved_at timestamptz not null default now()
    )`,
    // One row while a turn runs on the chat: whoever holds it renews expires_at; an expired row may be taken over.
    `create table conch_leases (
      user_id text not null,
      chat_id text not null,
      turn_id text not null,
      holder text not null,
      expires_at timestamptz not null,
      primary key (user_id, chat_id)
    )`,
    // The running turn's events, for a reconnect to any instance; dropped when the turn ends.
    `create table conch_turn_events (
      user_id text not null,
      chat_id text not null,
      event_id bigint not null,
      turn_id text not null,
      event text not null,
      primary key (user_id, chat_id, event_id)
    )`,
  ],
  // What the server's RunningTurns needs of a lease beyond its holder and expiry.
  [
    `alter table conch_leases
      add column purpose text not null default 'turn' check (purpose in ('turn', 'compact', 'delete')),
      add column start_cursor bigint,
      add column turn_seq integer,
      add column abort_requested boolean not null default false`,
  ],
  // When each running-turn event was stored: an ended turn's events stay a while for followers still reading them.
  [`alter table conch_turn_events add column stored_at timestamptz not null default now()`],
  // A chat's title as the person renamed it; null: the first words of its first message.
  [`alter table conch_chats add column title text`],
  // A fold ahead of the need holds the chat's lease too, giving way to any other.
  [
    `alter table conch_leases drop constraint conch_leases_purpose_check,
      add constraint conch_leases_purpose_check check (purpose in ('turn', 'compact', 'delete', 'fold'))`,
  ],
  // Branches: each message's parent (null: seq - 1, as every message before branches; -1: no parent, an edit of
  // the first message), indexed for the reads of a message's versions; the active leaf beside the transcript's
  // other copied fields (null: the log's last message, as a chat before branches); a branch switch holds the
  // chat's lease. Code before this step refuses the schema, so no reader of a log without parents reads a tree
  // as a line and appends to it.
  [
    `alter table conch_messages add column parent integer check (parent >= -1 and parent < seq - 1)`,
    `create index conch_messages_by_parent on conch_messages (user_id, chat_id, parent) where parent is not null`,
    `alter table conch_transcripts add column active_leaf integer check (active_leaf >= -1)`,
    `alter table conch_leases drop constraint conch_leases_purpose_check,
      add constraint conch_leases_purpose_check check (purpose in ('turn', 'compact', 'delete', 'fold', 'branch'))`,
  ],
];

/** The schema version this code writes and reads. */
export const schemaVersion = steps.length;

// Any constant serves; it keeps two instances starting at once from migrating side by side.
const migrationLock = 0x636f6e63;

/** What {@link migrate} did. */
export interface MigrationResult {
  /** The version found: 0 for an empty database. */
  readonly from: number;
  readonly to: number;
}

/**
 * Creates or upgrades the chat schema, in one transaction (all steps or none), and is safe to run at every start
 * and from several instances at once. A database at a newer version is refused with {@link SchemaTooNewError}.
 */
export async function migrate(db: SqlDatabase, options: { readonly upTo?: number } = {}): Promise<MigrationResult> {
  // `upTo` stops at an older version: how the upgrade from it is tested.
  const target = Math.min(options.upTo ?? schemaVersion, schemaVersion);
  checked.delete(db);
  return inTransaction(db, async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [migrationLock]);
    await tx.query(`create table if not exists conch_schema (
      singleton boolean primary key default true check (singleton),
      version integer not null,
      migrated_at timestamptz not null default now()
    )`);
    const from = await readVersion(tx);
    if (from > schemaVersion) throw new SchemaTooNewError(from, schemaVersion);
    for (const step of steps.slice(from, Math.max(from, target))) {
      for (const statement of step) await tx.query(statement);
    }
    const to = Math.max(from, target);
    if (from !== to) {
      await tx.query(
        `insert into conch_schema (singleton, version) values (true, $1)
         on conflict (singleton) do update set version = excluded.version, migrated_at = now()`,
        [to],
      );
    }
    return { from, to };
  });
}

async function readVersion(tx: SqlQueryable): Promise<number> {
  const { rows } = await tx.query("select version from conch_schema");
  return rows.length === 0 ? 0 : Number(rows[0]?.version);
}

// One check per database object, the first time a store uses it; a failed check is tried again next time.
const checked = new WeakMap<SqlDatabase, Promise<void>>();

/** Throws unless the database is at exactly the schema version this code knows. */
export function checkSchema(db: SqlDatabase): Promise<void> {
  let check = checked.get(db);
  if (check === undefined) {
    check = readSchemaVersion(db).then((found) => {
      if (found > schemaVersion) throw new SchemaTooNewError(found, schemaVersion);
      if (found < schemaVersion) throw new SchemaNotMigratedError(found, schemaVersion);
    });
    checked.set(db, check);
    check.catch(() => checked.delete(db));
  }
  return check;
}

async function readSchemaVersion(db: SqlDatabase): Promise<number> {
  const { rows } = await db.query("select case when to_regclass('conch_schema') is null then 0 else 1 end as present");
  if (Number(rows[0]?.present) === 0) return 0;
  const version = await db.query("select version from conch_schema");
  return version.rows.length === 0 ? 0 : Number(version.rows[0]?.version);
}
