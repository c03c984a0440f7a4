import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';
import { FAKE_STRIPE_KEY, startFakeStripe, type FakeStripe } from '../helpers/fake-stripe.js';

describe('billing through the built binary, against a fake Stripe on loopback', () => {
  let stripe: FakeStripe;
  let g: RunningGantry;
  before(async () => {
    stripe = await startFakeStripe();
    g = await spawnGantry({ env: stripe.env({ GANTRY_LOG_LEVEL: 'debug' }) });
  });
  after(async () => {
    await g.stop();
    await stripe.close();
  });

  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${g.url}/api/v1/${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as { data: any } };
  };
  const signIn = async (email: string) => {
    assert.equal(
      (await g.cli(['user', 'create', '--email', email, '--password', 'long enough pw', '--verified'])).code,
      0,
    );
    const res = await fetch(`${g.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'long enough pw' }),
    });
    return ((await res.json()) as { data: { accessToken: string; user: { id: string } } }).data;
  };

  it('a top-up paid once and delivered three times at once is credited once; a seat release lowers the quantity once', async () => {
    const owner = await signIn('billing-owner@example.test');
    const checkout = await api('POST', 'billing/checkout', owner.accessToken, { amount: 2000 });
    assert.equal(checkout.status, 201);
    const body = stripe.paidSessionEvent(checkout.body.data.sessionId);
    const deliveries = await Promise.all(
      [1, 2, 3].map(() =>
        fetch(`${g.url}/api/v1/billing/webhooks/stripe`, {
          method: 'POST',
          headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': stripe.sign(body) },
          body,
        }),
      ),
    );
    assert.deepEqual(
      deliveries.map((d) => d.status),
      [200, 200, 200],
    );
    const shown = await g.cli(['wallet', 'show', owner.user.id, '--json']);
    assert.equal(shown.code, 0, shown.stderr);
    const wallet = JSON.parse(shown.stdout) as { balance: number; ledger: Array<{ reference: string }> };
    assert.equal(wallet.balance, 20);
    assert.deepEqual(
      wallet.ledger.map((r) => r.reference),
      [checkout.body.data.sessionId],
    );

    const member = await signIn('billing-member@example.test');
    const account = await api('POST', 'accounts', owner.accessToken, { slug: 'e2e-billing', legalName: 'E2E Billing' });
    const accountId = account.body.data.id;
    assert.equal((await g.cli(['account', 'member', 'add', accountId, '--user', member.user.id])).code, 0);
    const item = stripe.addSeatItem(7);
    assert.equal(
      (await g.cli(['account', 'billing', accountId, '--customer', 'cus_E2e', '--seat-item', item.id])).code,
      0,
    );
    const removed = await g.cli([
      'account',
      'member',
      'remove',
      accountId,
      member.user.id,
      '--release-seat',
      '--yes',
      '--json',
    ]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(JSON.parse(removed.stdout).seatRelease, { status: 'requested' });
    assert.equal(item.quantity, 6);

    assert.ok(g.stdout.length > 0);
    assert.ok(!g.stdout.some((line) => line.includes(FAKE_STRIPE_KEY)), 'the key is never logged');
  });
});
