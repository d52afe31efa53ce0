// Chats in Postgres: a `pg` Pool or PGlite, same SQL. Its own entry, so neither reaches the browser's root entry.

export { ChatImportConflictError, SchemaNotMigratedError, SchemaTooNewError } from "../errors.js";
export { createPostgresChatDirectory } from "./chat-directory.js";
export { type FileChatsImport, importFileChats } from "./import-file-chats.js";
export { type MigrationResult, migrate, schemaVersion } from "./migrate.js";
export {
  createPostgresChatStore,
  type PostgresChatStore,
  type PostgresChatStoreOptions,
  type StoredChat,
} from "./postgres-store.js";
export {
  createPostgresRunningTurns,
  type PostgresRunningTurns,
  type PostgresRunningTurnsOptions,
} from "./running-turns.js";
export type { SqlDatabase, SqlEmbedded, SqlPool, SqlPoolClient, SqlQueryable, SqlRow } from "./sql.js";
