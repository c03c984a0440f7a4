import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openConfiguredDatabase, openDatabase } from '../../src/db/connection.js';
import { migrate, appliedMigrations, MigrationError } from '../../src/db/migrator.js';
import { migrations } from '../../migrations/index.js';
import { resolveConfig } from '../../src/config.js';
import { createAppContext, type AppContext } from '../../src/app.js';
import { createLogger } from '../../src/lib/logger.js';
import { TEST_ENV } from '../helpers/app.js';
import { createTestDatabase, TEST_ENGINE, testEnvFor } from '../helpers/postgres.js';
import { inTransaction } from '../../src/db/tx.js';
import { CHANGE_FEED_PAGE } from '../../src/db/change-feed.js';

describe('database and migrator', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(tmpdir(), 'gantry-db-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));
  /** A fresh, empty database of the engine under test: a SQLite file, or an empty PostgreSQL database. */
  const emptyDatabase = async (name: string) =>
    TEST_ENGINE === 'postgres'
      ? openConfiguredDatabase({
          dbFile: '',
          databaseUrl: (await createTestDatabase(path.join(dir, name), { empty: true })).url,
        })
      : openDatabase(path.join(dir, `${name}.db`));

  // SQLite's own settings; PostgreSQL's durability and isolation are the server's and tx.ts's.
  it('opens with WAL, foreign keys and a busy timeout', async () => {
    const handle = openDatabase(path.join(dir, 'pragmas.db'));
    try {
      assert.equal(handle.sqlite.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(handle.sqlite.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(handle.sqlite.pragma('busy_timeout', { simple: true }), 5000);
    } finally {
      await handle.close();
    }
  });

  it('applies every migration once, in order; a second run applies nothing', async () => {
    const handle = await emptyDatabase('idem');
    try {
      const first = await migrate(handle.db, migrations);
      assert.deepEqual(
        first.applied,
        migrations.map((m) => m.id),
      );
      const second = await migrate(handle.db, migrations);
      assert.deepEqual(second.applied, []);
      assert.deepEqual(await appliedMigrations(handle.db), migrations.map((m) => m.id).sort());
    } finally {
      await handle.close();
    }
  });

  it('rolls a failing migration back whole, recording nothing', async () => {
    const handle = await emptyDatabase('fail');
    try {
      const broken = {
        id: '9999_broken',
        async up(db: Parameters<(typeof migrations)[number]['up']>[0]) {
          await db.schema.createTable('half_done').addColumn('id', 'text').execute();
          throw new Error('boom');
        },
      };
      await assert.rejects(migrate(handle.db, [...migrations, broken]), /boom/);
      const tables = await (TEST_ENGINE === 'postgres'
        ? sql`select table_name from information_schema.tables where table_name = 'half_done'`
        : sql`select name from sqlite_master where name = 'half_done'`
      ).execute(handle.db);
      assert.deepEqual(tables.rows, []);
      assert.ok(!(await appliedMigrations(handle.db)).includes('9999_broken'));
    } finally {
      await handle.close();
    }
  });

  it('refuses a database migrated by a newer gantry', async () => {
    const handle = await emptyDatabase('newer');
    try {
      await migrate(handle.db, migrations);
      await handle.db
        .insertInto('schema_migrations')
        .values({ id: '9999_from_the_future', applied_at: new Date().toISOString() })
        .execute();
      await assert.rejects(
        migrate(handle.db, migrations),
        (err: unknown) =>
          err instanceof MigrationError && /newer gantry/.test(err.message) && /9999_from_the_future/.test(err.message),
      );
    } finally {
      await handle.close();
    }
  });
});

describe('change feed across processes', () => {
  let dir: string;
  let a: AppContext;
  let b: AppContext;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gantry-feed-'));
    const env = await testEnvFor(dir, TEST_ENV);
    const config = resolveConfig({ dataDir: dir }, env);
    const logger = createLogger('silent');
    a = await createAppContext(config, { env, logger });
    b = await createAppContext(config, { env, logger });
    await a.kernel.changes.start(60_000);
    await b.kernel.changes.start(60_000);
  });
  after(async () => {
    await a.kernel.close();
    await b.kernel.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a change published by one context reaches the other after poll(), once, and the publisher at once', async () => {
    const seenA: Array<string | null> = [];
    const seenB: Array<string | null> = [];
    a.kernel.changes.subscribe('test.topic', (key) => seenA.push(key));
    b.kernel.changes.subscribe('test.topic', (key) => seenB.push(key));
    await inTransaction(a.kernel.db, (trx) => a.kernel.changes.publish(trx, 'test.topic', 'k1'));
    assert.deepEqual(seenA, ['k1']);
    // On SQLite nothing reaches b before it polls; on PostgreSQL its LISTEN connection may
    // already have delivered it (docs/postgres.md, Change feed).
    if (TEST_ENGINE === 'sqlite') assert.deepEqual(seenB, []);
    await b.kernel.changes.poll();
    assert.deepEqual(seenB, ['k1']);
    await b.kernel.changes.poll();
    assert.deepEqual(seenB, ['k1']);
    await a.kernel.changes.poll();
    assert.deepEqual(seenA, ['k1'], 'a process does not replay its own changes');
  });

  it('a burst larger than one page is delivered whole by one poll', async () => {
    const seen: Array<string | null> = [];
    b.kernel.changes.subscribe('test.burst', (key) => seen.push(key));
    const burst = CHANGE_FEED_PAGE * 2 + 5;
    await inTransaction(a.kernel.db, async (trx) => {
      for (let i = 0; i < burst; i++) await a.kernel.changes.publish(trx, 'test.burst', String(i));
    });
    await b.kernel.changes.poll();
    assert.equal(seen.length, burst);
    assert.equal(seen.at(-1), String(burst - 1));
  });

  it('a session revoked by one process is refused by the other at once after poll (cache invalidated)', async () => {
    const user = await a.services.identity.createUser({
      email: 'feed@example.test',
      password: 'long enough pw',
      verified: true,
    });
    const session = await b.services.identity.sessions.start(user.id);
    assert.ok(await b.services.identity.sessionVerifier.verify(session.accessToken));
    await inTransaction(a.kernel.db, (trx) => a.services.identity.sessions.revokeAllOfUser(trx, user.id, 'test'));
    await b.kernel.changes.poll();
    assert.equal(await b.services.identity.sessionVerifier.verify(session.accessToken), null);
  });

  it('a user changed by one process is re-read by the other (user cache invalidated)', async () => {
    const user = await a.services.identity.createUser({
      email: 'cache@example.test',
      password: 'long enough pw',
      verified: true,
    });
    assert.equal((await b.services.identity.getUserCached(user.id)).username, null);
    await a.services.identity.flows.claimUsername(user.id, 'cached_name');
    // On SQLite nothing reaches b before it polls; on PostgreSQL its LISTEN connection may
    // already have been told (docs/scaling.md), so only the outcome after the poll is the rule there.
    if (TEST_ENGINE === 'sqlite')
      assert.equal((await b.services.identity.getUserCached(user.id)).username, null, 'still cached before the poll');
    await b.kernel.changes.poll();
    assert.equal((await b.services.identity.getUserCached(user.id)).username, 'cached_name');
  });
});
