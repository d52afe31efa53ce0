import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { inject } from "vitest";
import { migrate } from "../migrate.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The real Postgres of this run: scripts/ensure-postgres.mjs started it, or DATABASE_URL named it. */
    databaseUrl: string;
  }
}

/** A database for one test file, and how to remove it. */
export interface TestDatabase<Db> {
  readonly db: Db;
  /** The URL of this database (real Postgres only), for another pool or process on it. */
  readonly url?: string;
  close(): Promise<void>;
}

let template: Promise<Blob> | undefined;

/** The empty cluster pglite-template.ts made for this run, read once per test file. */
function emptyCluster(): Promise<Blob> {
  template ??= readFile(inject("pgliteTemplate")).then((bytes) => new Blob([bytes]));
  return template;
}

/** An in-memory PGlite (a new, empty cluster), migrated unless told otherwise. */
export async function openPglite(options: { migrated?: boolean } = {}): Promise<TestDatabase<PGlite>> {
  const db = new PGlite({ loadDataDir: await emptyCluster() });
  await db.waitReady;
  if (options.migrated !== false) await migrate(db);
  return { db, close: () => db.close() };
}

/** A new, empty database on the run's real Postgres (dropped on close), with a pool on it. */
export async function openPostgres(options: { migrated?: boolean } = {}): Promise<TestDatabase<pg.Pool>> {
  const serverUrl = inject("databaseUrl");
  const name = `conch_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = new pg.Pool({ connectionString: url.toString(), max: 8 });
  if (options.migrated !== false) await migrate(db);
  return {
    db,
    url: url.toString(),
    async close() {
      await db.end();
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      // A pool's end() resolves before its connections have gone; forced away, they would raise an error on a
      // pool nobody listens to any more (an uncaught 57P01 in the run). Wait for them first (at most 10 s).
      for (let waited = 0; waited < 10_000; waited += 50) {
        const { rows } = await dropper.query("select count(*)::int as open from pg_stat_activity where datname = $1", [
          name,
        ]);
        if (rows[0]?.open === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await dropper.query(`drop database if exists ${name} with (force)`);
      await dropper.end();
    },
  };
}

/** A person id no other test uses, so stores on one database never see each other's chats. */
export function freshPerson(): string {
  return `person-${randomBytes(6).toString("hex")}`;
}
