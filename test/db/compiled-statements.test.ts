import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { compiledStatement, compileOnce, preparedName } from '../../src/db/compiled.js';
import { type DbHandle, openDatabase } from '../../src/db/connection.js';
import { openPostgres } from '../../src/db/postgres.js';
import { migrate } from '../../src/db/migrator.js';
import type { Executor } from '../../src/db/tx.js';
import { migrations } from '../../migrations/index.js';
import { createTestDatabase, TEST_ENGINE } from '../helpers/postgres.js';

/** A statement with a value bound twice, two others and a constant of its own (the 0). */
const windowsOf = (db: Executor) =>
  compileOnce<'prefix' | 'nowMs' | 'least', { bucket: string; count: number }>((p) =>
    db
      .selectFrom('rate_limit_windows')
      .select(['bucket', 'count'])
      .where(sql<boolean>`bucket like cast(${p('prefix')} as text) || '%'`)
      .where('reset_at_ms', '>', p('nowMs'))
      .where('count', '>=', p('least'))
      .where('count', '>', 0)
      .where(sql<boolean>`length(cast(${p('prefix')} as text)) > 0`)
      .orderBy('bucket'),
  );

/**
 * compileOnce (docs/kernel.md, Compiled statements): built and compiled once, bound by name on
 * every run, and prepared by name once per connection on PostgreSQL.
 */
describe('statements compiled once', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-compiled-'));
  let handle: DbHandle;
  let dropDatabase: (() => Promise<void>) | null = null;

  before(async () => {
    if (TEST_ENGINE === 'postgres') {
      const database = await createTestDatabase(dataDir);
      dropDatabase = database.drop;
      // One connection, so what it has prepared can be read on it.
      handle = openPostgres(database.url, { maxConnections: 1 });
    } else {
      handle = openDatabase(path.join(dataDir, 'gantry.db'));
      await migrate(handle.db, migrations);
    }
    await handle.db
      .insertInto('rate_limit_windows')
      .values([
        { bucket: 'a|1', count: 3, reset_at_ms: 2_000 },
        { bucket: 'a|2', count: 1, reset_at_ms: 2_000 },
        { bucket: 'a|3', count: 5, reset_at_ms: 500 },
        { bucket: 'b|1', count: 9, reset_at_ms: 2_000 },
      ])
      .execute();
  });

  after(async () => {
    await handle?.close();
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('binds each run’s values by name, the same name wherever it appears, and keeps the query’s own constants', async () => {
    const statement = windowsOf(handle.db);
    const run = async (values: { prefix: string; nowMs: number; least: number }) =>
      (await handle.db.executeQuery(statement(values))).rows.map((row) => [row.bucket, Number(row.count)]);
    assert.deepEqual(await run({ prefix: 'a', nowMs: 1_000, least: 1 }), [
      ['a|1', 3],
      ['a|2', 1],
    ]);
    assert.deepEqual(await run({ prefix: 'a', nowMs: 1_000, least: 2 }), [['a|1', 3]]);
    assert.deepEqual(await run({ prefix: 'a', nowMs: 100, least: 2 }), [
      ['a|1', 3],
      ['a|3', 5],
    ]);
    assert.deepEqual(await run({ prefix: 'b', nowMs: 1_000, least: 0 }), [['b|1', 9]]);
    // Nothing of one run stays in the next: an empty prefix matches nothing by the query's own rule.
    assert.deepEqual(await run({ prefix: '', nowMs: 0, least: 0 }), []);
    assert.equal(
      statement({ prefix: 'x', nowMs: 1, least: 2 }).sql,
      statement({ prefix: 'y', nowMs: 3, least: 4 }).sql,
    );
  });

  it('is prepared by name on PostgreSQL, once per connection; other queries are not', async () => {
    const statement = windowsOf(handle.db);
    const compiledSql = statement({ prefix: 'a', nowMs: 0, least: 0 }).sql;
    const name = preparedName(compiledSql);
    assert.match(name ?? '', /^gantry_[0-9a-f]{32}$/);
    assert.equal(preparedName('select 1'), undefined);
    for (let i = 0; i < 3; i++) await handle.db.executeQuery(statement({ prefix: 'a', nowMs: i, least: 0 }));
    await handle.db.selectFrom('rate_limit_windows').select('bucket').execute();
    // On SQLite the name is unused: connection.ts prepares every statement once by its text.
    if (TEST_ENGINE === 'sqlite') return;
    const { rows } = await sql<{ name: string; statement: string }>`
      select name, statement from pg_prepared_statements`.execute(handle.db);
    assert.deepEqual(rows, [{ name, statement: compiledSql }]);
  });
  // After the test above: it prepares a statement of its own on the one connection.
  it('a store statement (compiledStatement) runs on the database and inside a transaction, compiled once', async () => {
    let builds = 0;
    const countOf = compiledStatement<'bucket', { count: number }>((db, p) => {
      builds++;
      return db.selectFrom('rate_limit_windows').select('count').where('bucket', '=', p('bucket'));
    });
    assert.equal(Number((await countOf.first(handle.db, { bucket: 'a|1' }))?.count), 3);
    assert.equal(await countOf.first(handle.db, { bucket: 'nope' }), undefined);
    const inside = await handle.db.transaction().execute(async (trx) => {
      await trx.updateTable('rate_limit_windows').set({ count: 4 }).where('bucket', '=', 'a|1').execute();
      // The transaction's own write is what it reads.
      return Number((await countOf.first(trx, { bucket: 'a|1' }))?.count);
    });
    assert.equal(inside, 4);
    assert.deepEqual(
      (await countOf.rows(handle.db, { bucket: 'b|1' })).map((r) => Number(r.count)),
      [9],
    );
    assert.equal(builds, 1, 'built and compiled once for the engine');
    await handle.db.updateTable('rate_limit_windows').set({ count: 3 }).where('bucket', '=', 'a|1').execute();
  });
});
