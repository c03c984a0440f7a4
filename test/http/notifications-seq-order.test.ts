import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { inTransaction } from '../../src/db/tx.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';

/**
 * A stream, and a resume with Last-Event-ID on any node, advance by `seq > last`
 * (docs/postgres.md, Several nodes): one user's seqs must commit in order, or a reader passes
 * a seq that commits after it looked. On PostgreSQL notifies run side by side on the pool.
 */
describe('notification seq commit order', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('3 rounds of 80 concurrent notifies: a reader advancing by seq > last never skips one', async () => {
    for (let round = 0; round < 3; round++) await oneRound();
  });

  async function oneRound() {
    const { notifications } = t.app.services;
    const user = await makeUser(t.app);
    const other = await makeUser(t.app);
    const seen = new Set<string>();
    let last = 0;
    let writing = true;
    const readOnce = async () => {
      const fresh = await notifications.listAfter(user.id, last, 1000);
      for (const { seq, notification } of fresh) {
        assert.ok(seq > last);
        seen.add(notification.id);
        last = seq;
      }
    };
    const reader = (async () => {
      while (writing) {
        await readOnce();
        await tick();
      }
    })();
    // Each notify inside a longer transaction, as when another domain's write notifies: its seq
    // is drawn well before it commits. Another user's notifies in between.
    const ids = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        inTransaction(t.app.kernel.db, async (trx) => {
          const id = await notifications.notify(trx, {
            userId: i % 4 === 3 ? other.id : user.id,
            title: `n${i}`,
            body: 'b',
          });
          await sleep(Math.floor(Math.random() * 6));
          return id;
        }),
      ),
    );
    writing = false;
    await reader;
    await readOnce();
    const mine = ids.filter((_, i) => i % 4 !== 3);
    assert.equal(mine.length, 60);
    assert.deepEqual(
      mine.filter((id) => !seen.has(id)),
      [],
      'notifications the reader skipped',
    );
    assert.equal(seen.size, 60);
  }
});
