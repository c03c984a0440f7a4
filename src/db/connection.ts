import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDialectConfig,
  type SqliteDatabase as KyselySqlite,
  type TransactionSettings,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import { openPostgres } from './postgres.js';
import type { DbHandle } from './handle.js';
import { openKysely } from './transaction-guard.js';

export type { Database, DbHandle } from './handle.js';

/** PostgreSQL when a database URL is configured, else the SQLite file (docs/postgres.md). */
export function openConfiguredDatabase(
  config: { dbFile: string; databaseUrl: string | null },
  options: { guardTransactions?: boolean } = {},
): DbHandle {
  return config.databaseUrl ? openPostgres(config.databaseUrl, options) : openDatabase(config.dbFile, options);
}

/**
 * One connection per process. WAL lets a CLI process and the server share the file;
 * busy_timeout makes a writer wait for the other's lock instead of failing at once.
 */
export function openDatabase(
  file: string,
  options: { guardTransactions?: boolean } = {},
): DbHandle & { sqlite: SqliteDatabase.Database } {
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = openKysely(
    new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }),
    options.guardTransactions === true,
  );
  let closed = false;
  return {
    engine: 'sqlite',
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
 * Every kysely transaction on SQLite begins IMMEDIATE (docs/kernel.md, Transactions): it takes
 * the write lock at BEGIN, where busy_timeout waits for another process's writer. Kysely's
 * driver begins DEFERRED, and a deferred transaction that has read and then writes after
 * another connection committed gets SQLITE_BUSY at once, without the busy handler. A
 * transaction asked for as read only stays DEFERRED and takes no write lock.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    await connection.executeQuery(
      CompiledQuery.raw(settings?.accessMode === 'read only' ? 'begin' : 'begin immediate'),
    );
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
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
