import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connection.js';

type DbHandle = ReturnType<typeof openDatabase>;
import { inTransaction } from '../../src/db/tx.js';

/**
 * Two connections on one file, as the server and a CLI process have (docs/kernel.md,
 * Transactions). The other connection does not wait (busy_timeout 0): the test runs both on
 * one thread, so a wait could only time out.
 */
describe('write transactions take the write lock when they begin', () => {
  let dir: string;
  let ours: DbHandle;
  let other: DbHandle;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gantry-lock-'));
    const file = path.join(dir, 'lock.db');
    ours = openDatabase(file);
    other = openDatabase(file);
    ours.sqlite.exec('create table items (id integer primary key, name text not null)');
    other.sqlite.pragma('busy_timeout = 0');
  });
  after(async () => {
    await ours.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = () => (other.sqlite.prepare('select count(*) as n from items').get() as { n: number }).n;
  const otherWrite = (name: string) => other.sqlite.prepare('insert into items (name) values (?)').run(name);

  it('a transaction that reads, then writes, is never overtaken by another connection commit in between', async () => {
    const before_ = count();
    const written = await inTransaction(ours.db, async (trx) => {
      const seen = await sql<{ n: number }>`select count(*) as n from items`.execute(trx);
      // Kysely's plain BEGIN would let this commit land, and our write below would then fail
      // with SQLITE_BUSY at once ("database is locked"), busy_timeout or not.
      assert.throws(() => otherWrite('from the other process'), /database is locked/);
      await sql`insert into items (name) values (${`after seeing ${seen.rows[0].n}`})`.execute(trx);
      return seen.rows[0].n;
    });
    assert.equal(written, before_);
    assert.equal(count(), before_ + 1);
    // The lock is released at COMMIT: the other connection writes again.
    otherWrite('afterwards');
    assert.equal(count(), before_ + 2);
  });

  it('a failed transaction releases the lock too', async () => {
    await assert.rejects(
      inTransaction(ours.db, async (trx) => {
        await sql`insert into items (name) values (${'rolled back'})`.execute(trx);
        throw new Error('boom');
      }),
      /boom/,
    );
    otherWrite('after the rollback');
    assert.equal(
      (other.sqlite.prepare("select count(*) as n from items where name = 'rolled back'").get() as { n: number }).n,
      0,
    );
  });

  it('a transaction asked for as read only takes no write lock', async () => {
    const before_ = count();
    await ours.db
      .transaction()
      .setAccessMode('read only')
      .execute(async (trx) => {
        await sql`select count(*) as n from items`.execute(trx);
        otherWrite('while we only read');
      });
    assert.equal(count(), before_ + 1);
  });

  it('reads outside a transaction take no write lock', async () => {
    const before_ = count();
    const rows = await sql<{ n: number }>`select count(*) as n from items`.execute(ours.db);
    otherWrite('after a plain read');
    assert.equal(rows.rows[0].n, before_);
    assert.equal(count(), before_ + 1);
  });
});
