import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { DB } from './schema.js';

export type Database = Kysely<DB>;

export interface DbHandle {
  db: Database;
  /** The raw connection, for what kysely does not cover: pragmas and the online backup API. */
  sqlite: SqliteDatabase.Database;
  close(): Promise<void>;
}

/**
 * One connection per process. WAL lets a CLI process and the server share the file;
 * busy_timeout makes a writer wait for the other's lock instead of failing at once.
 */
export function openDatabase(file: string): DbHandle {
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
  let closed = false;
  return {
    db,
    sqlite,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy(); // closes the better-sqlite3 connection too
    },
  };
}
