import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { call, lastAudit } from '../helpers/accounts.js';
import { makeAccount, makeTeam, makeUser } from '../helpers/factories.js';
import { startFakeStripe, type FakeStripe } from '../helpers/fake-stripe.js';

describe('gantry account billing, and a Stripe top-up seen by gantry wallet show', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  before(async () => {
    stripe = await startFakeStripe();
    t = await createTestApp({ env: stripe.env() });
  });
  after(async () => {
    await t.close();
    await stripe.close();
  });
  const run = (args: string[], env: NodeJS.ProcessEnv = stripe.env()) => cli(args, { dataDir: t.dataDir, env });

  it('links an account to its customer and seat item, shows it, refuses malformed ids', async () => {
    const owner = await makeUser(t.app);
    const account = await makeAccount(t.app, owner.id);
    const empty = await run(['account', 'billing', account.id, '--json']);
    assert.equal(empty.code, 0, empty.stderr);
    assert.deepEqual(empty.json(), {
      accountId: account.id,
      provider: 'stripe',
      customerId: null,
      seatItemId: null,
      updatedAt: null,
    });
    const set = await run([
      'account',
      'billing',
      account.id,
      '--customer',
      'cus_Abc123',
      '--seat-item',
      'si_Def456',
      '--json',
    ]);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.json<{ customerId: string }>().customerId, 'cus_Abc123');
    assert.equal(set.json<{ seatItemId: string }>().seatItemId, 'si_Def456');
    const audit = await lastAudit(t.app, account.id, 'billing.account_linked');
    assert.equal(audit.actorId, 'system');
    assert.deepEqual(audit.metadata, { provider: 'stripe', customerId: 'cus_Abc123', seatItemId: 'si_Def456' });
    // one field at a time; "none" clears
    await run(['account', 'billing', account.id, '--seat-item', 'none']);
    const shown = await run(['account', 'billing', account.id]);
    assert.equal(shown.stdout, `${account.id}: customer cus_Abc123, seat item -`);

    for (const args of [
      ['--customer', 'acct_1'],
      ['--seat-item', 'sub_1'],
    ]) {
      const bad = await run(['account', 'billing', account.id, ...args]);
      assert.equal(bad.code, 2, args.join(' '));
      assert.match(bad.stderr, /customer|seat item/);
    }
    assert.equal(
      (await run(['account', 'billing', '00000000-0000-4000-8000-000000000000', '--customer', 'cus_X'])).code,
      2,
    );
    const unconfigured = await run(['account', 'billing', account.id, '--customer', 'cus_X'], {});
    assert.equal(unconfigured.code, 1);
    assert.match(unconfigured.stderr, /GANTRY_STRIPE_SECRET_KEY/);
  });

  it('wallet show lists the Stripe credit with the checkout session as its reference', async () => {
    const { owner } = await makeTeam(t.app);
    const checkout = await call(t, 'POST', 'billing/checkout', owner.headers, { amount: 1234 });
    assert.equal(checkout.status, 201);
    const body = stripe.paidSessionEvent(checkout.body.data.sessionId);
    const delivered = await t.inject({
      method: 'POST',
      url: '/api/v1/billing/webhooks/stripe',
      payload: body,
      headers: { 'content-type': 'application/json', 'stripe-signature': stripe.sign(body) },
    });
    assert.equal(delivered.statusCode, 200);
    const shown = await run(['wallet', 'show', owner.user.id, '--json']);
    assert.equal(shown.code, 0, shown.stderr);
    const wallet = shown.json<{
      balance: number;
      ledger: Array<{ amount: number; reason: string; reference: string }>;
    }>();
    assert.equal(wallet.balance, 12.34);
    assert.deepEqual(
      wallet.ledger.map((r) => [r.amount, r.reason, r.reference]),
      [[12.34, 'stripe_top_up', checkout.body.data.sessionId]],
    );
  });
});
