import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { makeUser } from '../helpers/factories.js';

/** `gantry wallet credit` is an adapter: the amount rule lives in the wallet service. */
describe('gantry wallet credit', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('refuses an amount that is not a positive number with exit 2, crediting nothing', async () => {
    const user = await makeUser(t.app);
    for (const amount of ['0', '-5', 'abc', 'Infinity']) {
      const res = await cli(['wallet', 'credit', user.id, amount], { dataDir: t.dataDir });
      assert.equal(res.code, 2, amount);
      assert.equal(res.stderr, 'gantry: amount must be a positive number', amount);
    }
    assert.equal((await t.app.services.wallet.get(user.id)).balance, 0);
    assert.equal(
      (await t.app.kernel.db.selectFrom('wallet_ledger').select('id').where('user_id', '=', user.id).execute()).length,
      0,
    );
  });

  it('credits a positive amount, and refuses an unknown user with exit 2', async () => {
    const user = await makeUser(t.app);
    const res = await cli(['wallet', 'credit', user.id, '2.5', '--json'], { dataDir: t.dataDir });
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.json<{ userId: string; balance: number; currency: string }>(), {
      ...res.json<object>(),
      userId: user.id,
      balance: 2.5,
      currency: 'USD',
    });
    const unknown = await cli(['wallet', 'credit', 'no-such-user', '1'], { dataDir: t.dataDir });
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'gantry: User not found: no id or email "no-such-user"');
  });
});

describe('gantry wallet show', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('prints the balance and the ledger, newest first; an unknown user is exit 2', async () => {
    const user = await makeUser(t.app);
    await t.app.services.wallet.credit(user.id, 2, 'operator_credit');
    await t.app.services.wallet.credit(user.id, 0.5, 'operator_credit');
    const res = await cli(['wallet', 'show', user.id, '--json'], { dataDir: t.dataDir });
    assert.equal(res.code, 0, res.stderr);
    const shown = res.json<{
      userId: string;
      balance: number;
      currency: string;
      ledger: Array<{ amount: number; reason: string; reference: string | null }>;
    }>();
    assert.equal(shown.userId, user.id);
    assert.equal(shown.balance, 2.5);
    assert.equal(shown.currency, 'USD');
    assert.deepEqual(
      shown.ledger.map((r) => [r.amount, r.reason, r.reference]),
      [
        [0.5, 'operator_credit', null],
        [2, 'operator_credit', null],
      ],
    );
    const human = await cli(['wallet', 'show', user.id], { dataDir: t.dataDir });
    assert.match(human.stdout, new RegExp(`wallet of ${user.id}: 2.5 USD`));
    assert.match(human.stdout, /operator_credit/);
    const unknown = await cli(['wallet', 'show', 'no-such-user'], { dataDir: t.dataDir });
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'gantry: User not found: no id or email "no-such-user"');
  });
});
