import type SqliteDatabase from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Engine } from './engine.js';
import type { DB } from './schema.js';

export type Database = Kysely<DB>;

/** An open database (connection.ts opens SQLite, postgres.ts PostgreSQL). */
export interface DbHandle {
  engine: Engine;
  db: Database;
  /**
   * The raw SQLite connection, for what kysely does not cover: pragmas, the online backup API
   * and the refresh grant's hot path. Null on PostgreSQL.
   */
  sqlite: SqliteDatabase.Database | null;
  close(): Promise<void>;
}
