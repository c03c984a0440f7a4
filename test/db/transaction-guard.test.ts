import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { inTransaction } from '../../src/db/tx.js';
import { TransactionGuardError } from '../../src/db/transaction-guard.js';

/**
 * Tests run with GANTRY_GUARD_TRANSACTIONS (test/helpers/app.ts): a query through the database
 * from inside one of its own open transactions throws instead of waiting for a second
 * connection of the pool (docs/kernel.md, Transactions).
 */
describe('the transaction guard', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t?.close();
  });

  const countUsers = async (executor: TestApp['app']['kernel']['db']) =>
    (await executor.selectFrom('users').select('id').execute()).length;

  it('throws for a query on the database inside its open transaction, and rolls the transaction back', async () => {
    const { db } = t.app.kernel;
    await assert.rejects(
      inTransaction(db, async () => countUsers(db)),
      (err: Error) =>
        err instanceof TransactionGuardError && /pass the transaction to the store function/.test(err.message),
    );
    // A transaction begun inside another one waits for a second connection the same way.
    await assert.rejects(
      inTransaction(db, async () => inTransaction(db, async (inner) => countUsers(inner))),
      TransactionGuardError,
    );
  });

  it('lets the transaction’s own queries run, and the database’s once the transaction has ended', async () => {
    const { db } = t.app.kernel;
    let leftRunning: Promise<number> | undefined;
    const inside = await inTransaction(db, async (trx) => {
      // Work the body starts but does not wait for runs after the commit: not inside any more.
      leftRunning = new Promise((resolve) => setTimeout(resolve, 50)).then(() => countUsers(db));
      return countUsers(trx);
    });
    assert.equal(typeof inside, 'number');
    assert.equal(await leftRunning, inside);
    assert.equal(await countUsers(db), inside);
  });
});
