import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, type SqliteDatabase as KyselySqlite } from 'kysely';
import { LRUCache } from 'lru-cache';
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
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
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

/**
 * Kysely's SQLite driver prepares every statement anew; preparing costs more than running
 * most of ours. Keyed by the SQL text (parameters stay bound per call), a statement is
 * prepared once and reused. Safe with one connection: kysely never runs two statements on it
 * at once, so a cached statement is never busy when it is handed out again.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): KyselySqlite {
  const statements = new LRUCache<string, SqliteDatabase.Statement>({ max: 1000, ttl: 3_600_000 });
  return {
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    close() {
      statements.clear();
      sqlite.close();
    },
  };
}
