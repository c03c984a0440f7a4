import type SqliteDatabase from 'better-sqlite3';
import { AssertionError } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Server, ServerInjectOptions } from '@hapi/hapi';
import { sql } from 'kysely';
import { resolveConfig, type ConfigFlags } from '../../src/config.js';
import { createAppContext, createAppServer, type AppContext } from '../../src/app.js';
import { ManualClock, systemClock, type Clock } from '../../src/lib/clock.js';
import { createLogger, type Logger } from '../../src/lib/logger.js';
import { createTestDatabase, sharedKeys, TEST_ENGINE } from './postgres.js';
import { appChecks } from './openapi-check.js';
import { copyMigratedDatabase } from './sqlite-template.js';

/**
 * Environment every test app gets: cheap scrypt, no log noise, and a query around an open
 * transaction throws (docs/kernel.md, Transactions).
 */
export const TEST_ENV: NodeJS.ProcessEnv = {
  GANTRY_SCRYPT_COST: '1024',
  GANTRY_GUARD_TRANSACTIONS: '1',
  GANTRY_LOG_LEVEL: 'silent',
  GANTRY_PUBLIC_URL: 'http://127.0.0.1:8080',
};

export interface TestApp {
  app: AppContext;
  server: Server;
  clock: Clock;
  dataDir: string;
  /** Captured log lines (JSON), to assert that nothing secret is logged. */
  logs: string[];
  inject(options: ServerInjectOptions | string): ReturnType<Server['inject']>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  clock?: ManualClock;
  env?: NodeJS.ProcessEnv;
  flags?: ConfigFlags;
  statusOnly?: boolean;
  dataDir?: string;
  /** The port the server listens on once started (tests that need a known origin: passkeys on localhost). */
  port?: number;
}

/**
 * A real app over a real temporary SQLite file (migrated: a copy of a migrated template,
 * test/helpers/sqlite-template.ts), its hapi server initialized but not listening: tests use
 * server.inject(). One per test file; close() removes the files.
 * With GANTRY_TEST_ENGINE=postgres the app gets a fresh PostgreSQL database instead, one per
 * data directory, dropped by close() with the files (docs/postgres.md, Tests).
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'gantry-test-'));
  const database = TEST_ENGINE === 'postgres' ? await createTestDatabase(dataDir) : null;
  const env = {
    ...TEST_ENV,
    ...(database && { GANTRY_DATABASE_URL: database.url, ...sharedKeys(dataDir) }),
    ...options.env,
  };
  const config = resolveConfig({ dataDir, ...options.flags }, env);
  // A fresh directory gets its database copied from a migrated template; one the test passed in
  // may hold a database already, or be meant to start empty.
  if (TEST_ENGINE === 'sqlite' && !options.dataDir && !config.databaseUrl && !existsSync(config.dbFile))
    await copyMigratedDatabase(config.dbFile);
  const logs: string[] = [];
  const logger: Logger = createLogger('debug', (line) => logs.push(line));
  const clock = options.clock ?? systemClock;
  const app = await createAppContext(config, { clock, logger, env });
  const server = await createAppServer(app, { statusOnly: options.statusOnly, port: options.port });
  await server.initialize();
  // Every answer of every test is checked against the OpenAPI document (docs/openapi.md):
  // inject()'s at once, those of the real listener when the app closes.
  const checks = appChecks(server, config);
  return {
    app,
    server,
    clock,
    dataDir,
    logs,
    async inject(opts) {
      const res = await server.inject(opts);
      checks.inject(res);
      return res;
    },
    async close() {
      await server.stop();
      await app.kernel.close();
      if (!options.dataDir) {
        rmSync(dataDir, { recursive: true, force: true });
        await database?.drop();
      }
      const failures = checks.failures();
      if (failures.length > 0)
        throw new AssertionError({
          message: `Answers over the listener that the OpenAPI document does not allow:\n${failures.join('\n')}`,
        });
    },
  };
}

/**
 * The raw SQLite connection, for the checks that read SQLite itself (query plans, the file's
 * bytes); a clear failure when the suite runs on PostgreSQL (docs/postgres.md, Tests).
 */
export function rawSqlite(kernel: { sqlite: SqliteDatabase.Database | null }): SqliteDatabase.Database {
  if (!kernel.sqlite) throw new Error('this check reads the SQLite database; it has no PostgreSQL counterpart yet');
  return kernel.sqlite;
}

/**
 * Everything the database stores, as text, for checks that a secret is never there in clear:
 * SQLite's file bytes after a checkpoint (free pages included); on PostgreSQL every row of
 * every table of the schema, each as PostgreSQL prints it.
 */
export async function storedText(app: AppContext): Promise<string> {
  const { kernel } = app;
  if (kernel.sqlite) {
    kernel.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    return readFileSync(kernel.config.dbFile).toString('latin1');
  }
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(kernel.db);
  const parts: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(name)} as t`.execute(kernel.db);
    parts.push(...rows.rows.map((r) => r.row));
  }
  return parts.join('\n');
}

/**
 * A table's insertion order, for tests whose manual clock gives many rows one created_at:
 * SQLite's rowid; on PostgreSQL the row's place in the heap, which follows insertion order in
 * a fresh test database whose rows are not updated (docs/postgres.md, Tests).
 */
export const insertionOrder = () => (TEST_ENGINE === 'postgres' ? sql`ctid` : sql`rowid`);

/** A port nothing listens on now, for a test app whose public URL must name its port before it starts. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
