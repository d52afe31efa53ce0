// Types of ensure-postgres.mjs, for the TypeScript that imports it (the bench's store section).
export interface StartedPostgres {
  readonly url: string;
  /** Whether the URL came from DATABASE_URL (then `stop` does nothing). */
  readonly external: boolean;
  stop(): Promise<void>;
}
export function findPostgresBin(): string | null;
export function ensurePostgresInstalled(): string;
export function startPostgres(options?: { databaseUrl?: string }): Promise<StartedPostgres>;
