import { describe, expect, it } from "vitest";
import { SchemaNotMigratedError, SchemaTooNewError } from "../errors.js";
import { sampleLog } from "../transcript/testing/fixtures.js";
import { migrate, schemaVersion } from "./migrate.js";
import { createPostgresChatStore } from "./postgres-store.js";
import type { SqlDatabase } from "./sql.js";
import { openPglite, openPostgres, type TestDatabase } from "./testing/databases.js";

const backends: [string, (options: { migrated: boolean }) => Promise<TestDatabase<SqlDatabase>>][] = [
  ["PGlite", openPglite],
  ["Postgres", openPostgres],
];

async function tables(db: SqlDatabase): Promise<string[]> {
  const { rows } = await db.query(
    "select table_name from information_schema.tables where table_schema = current_schema() and table_name like 'conch\\_%' order by 1",
  );
  return rows.map((row) => String(row.table_name));
}

describe.each(backends)("migrate on %s", (_backend, open) => {
  describe("given an empty database", () => {
    it("should create every table, and a re-run should change nothing and keep the chats", async () => {
      const { db, close } = await open({ migrated: false });
      try {
        expect(await migrate(db)).toEqual({ from: 0, to: schemaVersion });
        expect(await tables(db)).toEqual([
          "conch_chats",
          "conch_corrupt",
          "conch_leases",
          "conch_messages",
          "conch_schema",
          "conch_transcripts",
          "conch_turn_events",
        ]);
        await createPostgresChatStore({ db }).appendLog("kept", sampleLog());
        expect(await migrate(db)).toEqual({ from: schemaVersion, to: schemaVersion });
        expect(await createPostgresChatStore({ db }).readLog("kept")).toEqual(sampleLog());
      } finally {
        await close();
      }
    });
  });

  describe("given a database at the first schema version, with chats", () => {
    it("should upgrade it to the latest and keep every chat", async () => {
      const { db, close } = await open({ migrated: false });
      try {
        expect(await migrate(db, { upTo: 1 })).toEqual({ from: 0, to: 1 });
        await db.query("insert into conch_chats (user_id, chat_id) values ('local', 'old')");
        await db.query(
          "insert into conch_leases (user_id, chat_id, turn_id, holder, expires_at) values ('local', 'old', 't', 'h', now())",
        );
        expect(await migrate(db)).toEqual({ from: 1, to: schemaVersion });
        const { rows } = await db.query("select chat_id, purpose from conch_leases");
        expect(rows).toEqual([{ chat_id: "old", purpose: "turn" }]);
      } finally {
        await close();
      }
    });
  });

  describe("given a database no migration ran on", () => {
    it("should refuse every store call with SchemaNotMigratedError, creating nothing", async () => {
      const { db, close } = await open({ migrated: false });
      try {
        const error = await createPostgresChatStore({ db })
          .readLog("c")
          .catch((caught: unknown) => caught);
        expect(SchemaNotMigratedError.isInstance(error)).toBe(true);
        expect(await tables(db)).toEqual([]);
      } finally {
        await close();
      }
    });
  });

  describe("given a database at a newer schema version", () => {
    it("should refuse to migrate it or open a store on it with SchemaTooNewError, and change nothing", async () => {
      const { db, close } = await open({ migrated: true });
      try {
        await db.query("update conch_schema set version = $1", [schemaVersion + 1]);
        const migrating = await migrate(db).catch((caught: unknown) => caught);
        expect(SchemaTooNewError.isInstance(migrating)).toBe(true);
        expect(migrating).toMatchObject({ found: schemaVersion + 1, supported: schemaVersion });
        expect(String((migrating as Error).message)).toContain(`version ${schemaVersion + 1}`);
        const reading = await createPostgresChatStore({ db })
          .readLog("c")
          .catch((caught: unknown) => caught);
        expect(SchemaTooNewError.isInstance(reading)).toBe(true);
        const { rows } = await db.query("select version from conch_schema");
        expect(rows).toEqual([{ version: schemaVersion + 1 }]);
      } finally {
        await close();
      }
    });
  });
});

describe("migrate on Postgres from several instances starting at once", () => {
  it("should migrate once and let every instance start", async () => {
    const { db, url, close } = await openPostgres({ migrated: false });
    const { default: pg } = await import("pg");
    const pools = Array.from({ length: 3 }, () => new pg.Pool({ connectionString: url, max: 2 }));
    try {
      const results = await Promise.all(pools.map((pool) => migrate(pool)));
      expect(results.filter((result) => result.from === 0)).toHaveLength(1);
      expect(results.every((result) => result.to === schemaVersion)).toBe(true);
      expect(await tables(db)).toHaveLength(7);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      await close();
    }
  });
});
