import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { openConfiguredDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import type { DB } from '../../src/db/schema.js';
import { migrations } from '../../migrations/index.js';
import { startPostgres, type PostgresServer } from './postgres-server.mjs';

/**
 * Which engine the test apps run on: GANTRY_TEST_ENGINE=postgres runs the same tests on
 * PostgreSQL (docs/postgres.md, Tests); anything else keeps SQLite.
 */
export const TEST_ENGINE = process.env.GANTRY_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/** Every migration id, hashed: a template migrated by other migrations is never reused. */
const TEMPLATE = `gantry_template_${createHash('sha256')
  .update(migrations.map((m) => m.id).join(','))
  .digest('hex')
  .slice(0, 12)}`;
/** Serializes template creation across the test files running at once. */
const TEMPLATE_LOCK = 7_415_993_119;

let ownServer: Promise<PostgresServer> | null = null;

/**
 * The server: the one test/run.mjs started for the whole run (GANTRY_TEST_DATABASE_URL), else
 * one of this process's own, stopped when it exits.
 */
async function serverUrl(): Promise<string> {
  const shared = process.env.GANTRY_TEST_DATABASE_URL;
  if (shared) return shared.replace(/\/$/, '');
  ownServer ??= startPostgres().then((server) => {
    process.once('exit', () => server.stopSync());
    return server;
  });
  return (await ownServer).url;
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${await serverUrl()}/postgres` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Migrates the template once per server; a copy of it is a fresh database in milliseconds. */
async function ensureTemplate(admin: pg.Client): Promise<void> {
  const exists = await admin.query('select 1 from pg_database where datname = $1', [TEMPLATE]);
  if (exists.rowCount) return;
  const building = `${TEMPLATE}_building`;
  await admin.query(`drop database if exists ${building}`);
  await admin.query(`create database ${building} locale 'C' template template0`);
  const handle = openConfiguredDatabase({ dbFile: '', databaseUrl: `${await serverUrl()}/${building}` });
  try {
    await migrate(handle.db, migrations);
  } finally {
    await handle.close();
  }
  // Renamed only when complete: a run that died half-way leaves no template to copy.
  await admin.query(`alter database ${building} rename to ${TEMPLATE}`);
}

/**
 * A database of its own for one data directory, copied from the migrated template. The same
 * directory gives the same database (an app restarted over it, a CLI command run on it),
 * created once.
 */
export async function createTestDatabase(
  dataDir: string,
  options: { empty?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const database = `gantry_t_${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`;
  await withAdmin(async (admin) => {
    await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      await ensureTemplate(admin);
      const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
      // Empty: for the tests of migrating a fresh database.
      if (!exists.rowCount)
        await admin.query(
          options.empty
            ? `create database ${database} locale 'C' template template0`
            : `create database ${database} template ${TEMPLATE}`,
        );
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return {
    url: `${await serverUrl()}/${database}`,
    drop: () =>
      withAdmin(async (admin) => void (await admin.query(`drop database if exists ${database} with (force)`))),
  };
}

/**
 * The keys an operator gives every node on PostgreSQL (docs/postgres.md, Secrets): the same for
 * every app and CLI command over one data directory, as on the nodes of one cluster.
 */
export function sharedKeys(dataDir: string): NodeJS.ProcessEnv {
  const key = (name: string) => createHash('sha256').update(`${name}:${dataDir}`).digest('base64');
  return {
    GANTRY_SECRET_JWT_KEY: key('jwt'),
    GANTRY_SECRET_CURSOR_KEY: key('cursor'),
    GANTRY_SECRET_CREDENTIAL_KEY: key('credential'),
  };
}

/** The environment that points a test app or CLI command at its data directory's test database. */
export async function testDatabaseEnv(dataDir: string): Promise<NodeJS.ProcessEnv> {
  return TEST_ENGINE === 'postgres'
    ? { GANTRY_DATABASE_URL: (await createTestDatabase(dataDir)).url, ...sharedKeys(dataDir) }
    : {};
}

/**
 * TEST_ENV plus the database of a data directory, for tests that open a second app (another
 * process) over a test app's data directory themselves.
 */
export async function testEnvFor(dataDir: string, env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  return { ...env, ...(await testDatabaseEnv(dataDir)) };
}

/**
 * Everything the data directory's database holds, as text: the SQLite files' bytes, or on
 * PostgreSQL every row of every table. For the checks that a secret is stored sealed or hashed
 * and never in clear.
 */
export async function databaseText(dataDir: string): Promise<string> {
  if (TEST_ENGINE === 'sqlite')
    return readdirSync(dataDir)
      .filter((f) => f.startsWith('gantry.db'))
      .map((f) => readFileSync(path.join(dataDir, f)).toString('latin1'))
      .join('');
  const client = new pg.Client({ connectionString: (await createTestDatabase(dataDir)).url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    );
    const dumps: string[] = [];
    for (const { name } of tables.rows)
      for (const row of (await client.query<{ t: string }>(`select t::text as t from "${name}" t`)).rows)
        dumps.push(row.t);
    return dumps.join('\n');
  } finally {
    await client.end();
  }
}

/** Runs one statement on the data directory's PostgreSQL test database. */
export async function queryTestDatabase(dataDir: string, text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: (await createTestDatabase(dataDir)).url });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

/**
 * The id of the n-th credential key (1 = the first) a data directory's keyring gets: `k1`,
 * `k2`, ... in secrets.json on SQLite; on PostgreSQL `env` (the key every node is given), then
 * `c2`, `c3`, ... added by `gantry secrets rotate` (docs/postgres.md, Secrets).
 */
export function credentialKeyId(n: number): string {
  if (TEST_ENGINE === 'sqlite') return `k${n}`;
  return n === 1 ? 'env' : `c${n}`;
}

/**
 * The credential key ids (oldest first) and the active one, whichever engine: secrets.json on
 * SQLite, the `credential_keys` table (after `env`, which is never a row) on PostgreSQL.
 */
export async function credentialKeyring(dataDir: string): Promise<{ ids: string[]; active: string }> {
  if (TEST_ENGINE === 'sqlite') {
    const file = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
    return { ids: file.credentialKeys.map((k: { id: string }) => k.id), active: file.activeCredentialKeyId };
  }
  const client = new pg.Client({ connectionString: (await createTestDatabase(dataDir)).url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; active: number }>(
      'select id, active from credential_keys order by created_at, id',
    );
    return { ids: ['env', ...rows.map((r) => r.id)], active: rows.find((r) => r.active === 1)?.id ?? 'env' };
  } finally {
    await client.end();
  }
}

/**
 * Resolves once some backend of the test database waits on a lock: a request started beside a
 * held row lock has reached it (the tests of what a concurrent use finds after the wait).
 */
export async function untilBackendWaitsOnLock(db: Kysely<DB>): Promise<void> {
  for (let i = 0; ; i++) {
    const { rows } = await sql<{ n: number }>`select count(*) as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
    if (rows[0].n > 0) return;
    assert.ok(i < 200, 'the request never waited on the held row');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
