import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { auditOf, call, lastAudit } from '../helpers/accounts.js';
import { makeAccount, makeTeam, makeUser, signedInUser } from '../helpers/factories.js';
import { FAKE_STRIPE_KEY, startFakeStripe, type FakeStripe } from '../helpers/fake-stripe.js';

const WEB_URL = 'https://app.example.test';

describe('billing on Stripe: wallet top-ups, webhook, seat releases', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  before(async () => {
    stripe = await startFakeStripe();
    t = await createTestApp({ env: stripe.env({ GANTRY_WEB_URL: WEB_URL }) });
  });
  after(async () => {
    await t.close();
    await stripe.close();
  });

  const deliver = (body: string, signature?: string) =>
    t.inject({
      method: 'POST',
      url: '/api/v1/billing/webhooks/stripe',
      payload: body,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...(signature ? { 'stripe-signature': signature } : {}),
      },
    });
  const wallet = (userId: string) => t.app.services.wallet.show(userId);
  const checkoutRow = (sessionId: string) =>
    t.app.kernel.db
      .selectFrom('billing_checkouts')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
  const eventRows = (eventId: string) =>
    t.app.kernel.db.selectFrom('billing_events').selectAll().where('event_id', '=', eventId).execute();

  async function topUp(amount = 1500) {
    const { owner, account } = await makeTeam(t.app);
    const res = await call(t, 'POST', 'billing/checkout', owner.headers, { amount });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return {
      user: owner,
      account,
      session: res.body.data as { checkoutUrl: string; sessionId: string; expiresAt: string },
    };
  }

  it('checkout creates a Stripe Checkout Session in payment mode and answers {checkoutUrl, sessionId, expiresAt}', async () => {
    const { owner, account } = await makeTeam(t.app);
    const res = await call(t, 'POST', 'billing/checkout', owner.headers, { amount: 2500, currency: 'USD' });
    assert.equal(res.status, 201);
    const data = res.body.data;
    assert.match(data.sessionId, /^cs_test_/);
    assert.equal(data.checkoutUrl, `https://checkout.stripe.com/c/pay/${data.sessionId}`);
    assert.ok(Date.parse(data.expiresAt) > Date.now());
    assert.equal(data.amount, 2500);
    assert.equal(data.currency, 'usd');

    // What Stripe received: form-encoded, the secret key as bearer, an idempotency key.
    const sent = stripe.requests.findLast((r) => r.path === '/v1/checkout/sessions')!;
    assert.equal(sent.authorization, `Bearer ${FAKE_STRIPE_KEY}`);
    assert.match(sent.raw, /mode=payment/);
    assert.match(sent.idempotencyKey ?? '', /^gantry-checkout-/);
    const params = sent.params as Record<string, any>;
    assert.equal(params.line_items[0].price_data.unit_amount, '2500');
    assert.equal(params.line_items[0].price_data.currency, 'usd');
    assert.equal(params.line_items[0].quantity, '1');
    assert.equal(params.client_reference_id, owner.user.id);
    assert.equal(params.customer_email, owner.user.email);
    assert.equal(params.success_url, `${WEB_URL}/settings/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`);
    assert.equal(params.cancel_url, `${WEB_URL}/settings/billing?checkout=cancelled`);

    const row = await checkoutRow(data.sessionId);
    assert.deepEqual(
      [row.user_id, row.account_id, row.amount, row.currency, row.status],
      [owner.user.id, account.id, 2500, 'usd', 'open'],
    );
    const audit = await lastAudit(t.app, account.id, 'billing.checkout_created');
    assert.equal(audit.actorId, owner.user.id);
    assert.deepEqual(audit.metadata, {
      checkoutId: row.id,
      provider: 'stripe',
      sessionId: data.sessionId,
      amount: 2500,
      currency: 'usd',
    });
  });

  it("checkout uses the account's linked Stripe customer when there is one", async () => {
    const { owner, account } = await makeTeam(t.app);
    await t.app.services.billing.linkAccount(account.id, { customerId: 'cus_Linked123' });
    const res = await call(t, 'POST', 'billing/checkout', owner.headers, { amount: 700 });
    assert.equal(res.status, 201);
    const params = stripe.requests.findLast((r) => r.path === '/v1/checkout/sessions')!.params;
    assert.equal(params.customer, 'cus_Linked123');
    assert.equal(params.customer_email, undefined);
  });

  it('checkout refuses bad amounts and currencies with 400 and calls nobody', async () => {
    const before = stripe.requests.length;
    const cases: Array<[string, unknown]> = [
      ['below the minimum (500)', { amount: 499 }],
      ['above the maximum (100000)', { amount: 100_001 }],
      ['a fraction', { amount: 10.5 }],
      ['a string', { amount: '1000' }],
      ['missing', {}],
      ['zero', { amount: 0 }],
      ['another currency', { amount: 1000, currency: 'eur' }],
      ['not a currency code', { amount: 1000, currency: 'dollars' }],
      ['an unknown field', { amount: 1000, coupon: 'free' }],
    ];
    for (const [label, body] of cases) {
      // a user per case: refused calls count against the 5 per minute too
      const res = await call(t, 'POST', 'billing/checkout', (await signedInUser(t.app)).headers, body);
      assert.equal(res.status, 400, label);
      assert.equal(res.body.error!.code, 'VALIDATION_FAILED', label);
    }
    assert.equal(stripe.requests.length, before);
    assert.equal((await call(t, 'POST', 'billing/checkout', {}, { amount: 1000 })).status, 401);
  });

  it('checkout is limited to 5 per minute per user', async () => {
    const user = await signedInUser(t.app);
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await call(t, 'POST', 'billing/checkout', user.headers, { amount: 600 })).status,
        201,
        `call ${i + 1}`,
      );
    const sixth = await call(t, 'POST', 'billing/checkout', user.headers, { amount: 600 });
    assert.equal(sixth.status, 429);
    assert.equal(sixth.body.error!.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(sixth.headers['x-ratelimit-limit'], '5');
    // another user has their own budget
    assert.equal(
      (await call(t, 'POST', 'billing/checkout', (await signedInUser(t.app)).headers, { amount: 600 })).status,
      201,
    );
  });

  it('a top-up is credited exactly once when Stripe delivers the event three times, concurrently, and again later', async () => {
    const { user, account, session } = await topUp(1500);
    const body = stripe.paidSessionEvent(session.sessionId);
    const eventId = JSON.parse(body).id as string;
    const answers = await Promise.all([1, 2, 3].map(() => deliver(body, stripe.sign(body))));
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      [200, 200, 200],
    );
    const results = answers.map((a) => (a.result as { data: { duplicate: boolean; applied: boolean } }).data);
    assert.equal(results.filter((r) => r.applied).length, 1);
    assert.equal(results.filter((r) => r.duplicate).length, 2);
    const later = await deliver(body, stripe.sign(body));
    assert.deepEqual((later.result as { data: unknown }).data, { received: true, duplicate: true, applied: false });
    // Another event for the same session (an async payment success) credits nothing either.
    const other = stripe.paidSessionEvent(session.sessionId, {}, 'checkout.session.async_payment_succeeded');
    assert.equal(
      ((await deliver(other, stripe.sign(other))).result as { data: { applied: boolean } }).data.applied,
      false,
    );

    const shown = await wallet(user.user.id);
    assert.equal(shown.balance, 15);
    assert.equal(shown.ledger.length, 1);
    assert.deepEqual(
      { amount: shown.ledger[0].amount, reason: shown.ledger[0].reason, reference: shown.ledger[0].reference },
      { amount: 15, reason: 'stripe_top_up', reference: session.sessionId },
    );
    assert.equal((await eventRows(eventId)).length, 1);
    const row = await checkoutRow(session.sessionId);
    assert.equal(row.status, 'credited');
    assert.equal(row.credit_event_id, eventId);
    const credits = (await auditOf(t.app, account.id)).filter((a) => a.action === 'billing.wallet_credited');
    assert.equal(credits.length, 1);
    assert.equal(credits[0].actorId, 'system');
    assert.equal(credits[0].metadata.sessionId, session.sessionId);
    assert.equal(credits[0].metadata.amount, 1500);
  });

  it('a tampered, expired, unsigned or wrongly signed webhook is refused with 400 and changes nothing', async () => {
    const { user, session } = await topUp(900);
    const body = stripe.paidSessionEvent(session.sessionId);
    const eventId = JSON.parse(body).id as string;
    const now = Math.floor(Date.now() / 1000);
    const tampered = body.replace('"amount_total":900', '"amount_total":90000');
    assert.notEqual(tampered, body);
    const cases: Array<[string, string, string | undefined]> = [
      ['unsigned', body, undefined],
      ['malformed header', body, 'garbage'],
      ['tampered body', tampered, stripe.sign(body)],
      ['wrong secret', body, stripe.sign(body, { secret: 'whsec_someoneelse' })],
      ['expired (older than 300 s)', body, stripe.sign(body, { timestamp: now - 301 })],
      ['timestamp changed', body, stripe.sign(body, { timestamp: now }).replace(/t=\d+/, `t=${now - 1}`)],
      ['signed, but not JSON', 'not json', stripe.sign('not json')],
      ['signed, but not an event', '{"hello":1}', stripe.sign('{"hello":1}')],
    ];
    for (const [label, payload, signature] of cases) {
      const res = await deliver(payload, signature);
      assert.equal(res.statusCode, 400, label);
      assert.equal((res.result as { error: { code: string } }).error.code, 'VALIDATION_FAILED', label);
    }
    assert.equal((await wallet(user.user.id)).balance, 0);
    assert.equal((await eventRows(eventId)).length, 0);
    assert.equal((await checkoutRow(session.sessionId)).status, 'open');
    // the genuine delivery still works afterwards
    assert.equal((await deliver(body, stripe.sign(body))).statusCode, 200);
    assert.equal((await wallet(user.user.id)).balance, 9);
  });

  it('unknown events, unpaid sessions and sessions started elsewhere are acknowledged and apply nothing', async () => {
    const { user, session } = await topUp(800);
    const unknown = stripe.event('invoice.paid', { id: 'in_123', object: 'invoice' });
    const unpaid = stripe.paidSessionEvent(session.sessionId, { payment_status: 'unpaid' });
    const foreign = stripe.event('checkout.session.completed', {
      ...stripe.sessions.get(session.sessionId),
      id: 'cs_test_notours',
      payment_status: 'paid',
    });
    const wrongAmount = stripe.paidSessionEvent(session.sessionId, { amount_total: 1 });
    for (const body of [unknown, unpaid, foreign, wrongAmount]) {
      const res = await deliver(body, stripe.sign(body));
      assert.equal(res.statusCode, 200);
      assert.deepEqual((res.result as { data: unknown }).data, { received: true, duplicate: false, applied: false });
      assert.equal((await eventRows(JSON.parse(body).id)).length, 1);
    }
    assert.equal((await wallet(user.user.id)).balance, 0);
  });

  describe('seat release', () => {
    async function linkedTeam(quantity: number) {
      const team = await makeTeam(t.app, ['member']);
      const item = stripe.addSeatItem(quantity);
      await t.app.services.billing.linkAccount(team.account.id, { customerId: 'cus_Seats1', seatItemId: item.id });
      return { ...team, item };
    }
    const remove = (team: Awaited<ReturnType<typeof linkedTeam>>) =>
      call(
        t,
        'DELETE',
        `accounts/${team.account.id}/members/${team.members.member.user.id}?releaseSeat=true`,
        team.owner.headers,
      );
    const stillMember = async (team: Awaited<ReturnType<typeof linkedTeam>>) =>
      (await call(t, 'GET', `accounts/${team.account.id}/members?limit=500`, team.owner.headers)).body.data.some(
        (m: { chainerId: string }) => m.chainerId === team.members.member.user.id,
      );

    it('lowers the seat quantity by one with an idempotency key; the subscription update confirms it', async () => {
      const team = await linkedTeam(5);
      const res = await remove(team);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.seatRelease, { status: 'requested' });
      assert.equal(team.item.quantity, 4);
      const update = stripe.requests.findLast(
        (r) => r.method === 'POST' && r.path === `/v1/subscription_items/${team.item.id}`,
      )!;
      const releaseId = team.item.metadata.gantry_seat_release;
      assert.ok(releaseId);
      assert.equal(update.idempotencyKey, `gantry-seat-release-${releaseId}`);
      assert.equal(update.params.quantity, '4');
      const requested = await lastAudit(t.app, team.account.id, 'seat.release_requested');
      assert.deepEqual(requested.metadata, { releaseId, provider: 'stripe', status: 'requested' });
      assert.equal((await t.app.services.accounts.seatReleases.get(releaseId))!.status, 'requested');

      const body = stripe.subscriptionUpdatedEvent(team.item.id);
      const confirmed = await deliver(body, stripe.sign(body));
      assert.deepEqual((confirmed.result as { data: unknown }).data, {
        received: true,
        duplicate: false,
        applied: true,
      });
      const release = await t.app.services.accounts.seatReleases.get(releaseId);
      assert.equal(release!.status, 'confirmed');
      assert.ok(release!.confirmedAt);
      const audit = await lastAudit(t.app, team.account.id, 'seat.release_confirmed');
      assert.deepEqual(audit.metadata, { releaseId, provider: 'stripe', eventId: JSON.parse(body).id });
      // a later update of the same subscription confirms nothing new
      const again = stripe.subscriptionUpdatedEvent(team.item.id);
      assert.equal(
        ((await deliver(again, stripe.sign(again))).result as { data: { applied: boolean } }).data.applied,
        false,
      );
    });

    it('a lost answer is retried with the same key and releases one seat, not two', async () => {
      const team = await linkedTeam(3);
      stripe.failNext('POST', `/v1/subscription_items/${team.item.id}`, 'drop-after-apply');
      const res = await remove(team);
      assert.deepEqual(res.body.data.seatRelease, { status: 'requested' });
      assert.equal(team.item.quantity, 2);
      const updates = stripe.requests.filter(
        (r) => r.method === 'POST' && r.path === `/v1/subscription_items/${team.item.id}`,
      );
      assert.equal(updates.length, 2);
      assert.equal(updates[0].idempotencyKey, updates[1].idempotencyKey);

      // The same release asked again later: the item's metadata names it, nothing is written.
      const releaseId = team.item.metadata.gantry_seat_release;
      const again = await t.app.services.billing.seatAdapter!.releaseSeat({
        releaseId,
        accountId: team.account.id,
        userId: team.members.member.user.id,
        billedMembers: async () => 0,
      });
      assert.deepEqual(again, { accepted: true });
      assert.equal(team.item.quantity, 2);
      assert.equal(
        stripe.requests.filter((r) => r.method === 'POST' && r.path === `/v1/subscription_items/${team.item.id}`)
          .length,
        2,
      );
    });

    it('add-and-remove cycles by an admin never lower the quantity below the billed members (N-M1)', async () => {
      const team = await makeTeam(t.app, ['admin', 'member']);
      const item = stripe.addSeatItem(5);
      await t.app.services.billing.linkAccount(team.account.id, { customerId: 'cus_Seats3', seatItemId: item.id });
      const admin = team.members.admin.headers;
      const writes = () =>
        stripe.requests.filter((r) => r.method === 'POST' && r.path === `/v1/subscription_items/${item.id}`).length;
      const statuses: string[] = [];
      const quantities: number[] = [];
      for (let cycle = 0; cycle < 3; cycle++) {
        const throwaway = await makeUser(t.app);
        const added = await call(t, 'POST', `accounts/${team.account.id}/members`, admin, {
          chainerId: throwaway.id,
          role: 'viewer',
        });
        assert.equal(added.status, 201, JSON.stringify(added.body));
        const writesBefore = writes();
        const removed = await call(
          t,
          'DELETE',
          `accounts/${team.account.id}/members/${throwaway.id}?releaseSeat=true`,
          admin,
        );
        assert.equal(removed.status, 200);
        statuses.push(removed.body.data.seatRelease.status);
        quantities.push(item.quantity);
        const audit = await lastAudit(t.app, team.account.id, 'seat.release_requested');
        assert.equal(audit.targetId, throwaway.id);
        assert.equal(audit.metadata.status, removed.body.data.seatRelease.status);
        if (cycle === 2) assert.equal(writes(), writesBefore, 'the third release wrote nothing to Stripe');
      }
      // Two seats were paid beyond the 3 members: those two come back, and not one more.
      assert.deepEqual(statuses, ['requested', 'requested', 'seat_minimum_reached']);
      assert.deepEqual(quantities, [4, 3, 3]);
      const members = await call(t, 'GET', `accounts/${team.account.id}/members`, team.owner.headers);
      assert.equal(members.body.meta.total, 3);
      const released = await t.app.kernel.db
        .selectFrom('account_seat_releases')
        .select('status')
        .where('account_id', '=', team.account.id)
        .execute();
      assert.deepEqual(released.map((r) => r.status).sort(), ['requested', 'requested', 'seat_minimum_reached']);
    });

    it('a billed member gives back their seat; an invited member is billed and holds the floor', async () => {
      const team = await makeTeam(t.app, ['admin', 'member']);
      const item = stripe.addSeatItem(3);
      await t.app.services.billing.linkAccount(team.account.id, { customerId: 'cus_Seats4', seatItemId: item.id });
      const removeOne = (userId: string) =>
        call(t, 'DELETE', `accounts/${team.account.id}/members/${userId}?releaseSeat=true`, team.owner.headers);
      // 3 seats, 3 members: the member was paid for, so their seat goes back.
      const first = await removeOne(team.members.member.user.id);
      assert.deepEqual(first.body.data.seatRelease, { status: 'requested' });
      assert.equal(item.quantity, 2);
      assert.equal(
        item.metadata.gantry_seat_release,
        (await lastAudit(t.app, team.account.id, 'seat.release_requested')).metadata.releaseId,
      );

      // An invitation holds a seat: owner, admin and the invited user are 3 billed on 2 seats.
      const invitee = await signedInUser(t.app);
      const invited = await call(t, 'POST', `accounts/${team.account.id}/invitations`, team.owner.headers, {
        email: invitee.user.email,
        role: 'viewer',
      });
      assert.equal(invited.status, 201);
      const second = await removeOne(team.members.admin.user.id);
      assert.deepEqual(second.body.data.seatRelease, { status: 'seat_minimum_reached' });
      assert.equal(item.quantity, 2);
      assert.equal(
        (await lastAudit(t.app, team.account.id, 'seat.release_requested')).metadata.status,
        'seat_minimum_reached',
      );
    });

    it('two removals at once on one account release two seats (Stripe sets quantities, it cannot subtract)', async () => {
      const team = await makeTeam(t.app, ['member', 'admin']);
      const item = stripe.addSeatItem(6);
      await t.app.services.billing.linkAccount(team.account.id, { customerId: 'cus_Seats2', seatItemId: item.id });
      const answers = await Promise.all(
        [team.members.member, team.members.admin].map((m) =>
          call(t, 'DELETE', `accounts/${team.account.id}/members/${m.user.id}?releaseSeat=true`, team.owner.headers),
        ),
      );
      for (const res of answers)
        assert.deepEqual(res.body.data.seatRelease, { status: 'requested' }, JSON.stringify(res.body));
      assert.equal(item.quantity, 4);
      const quantities = stripe.requests
        .filter((r) => r.method === 'POST' && r.path === `/v1/subscription_items/${item.id}`)
        .map((r) => r.params.quantity);
      assert.deepEqual(quantities, ['5', '4']);
    });

    it('a failed Stripe call leaves the member removed and reports the reason', async () => {
      const refused = await linkedTeam(2);
      stripe.failNext('GET', `/v1/subscription_items/${refused.item.id}`, {
        status: 404,
        body: {
          error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such subscription item' },
        },
      });
      const res = await remove(refused);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.seatRelease, { status: 'billing_provider_refused' });
      assert.equal(await stillMember(refused), false);
      assert.equal(refused.item.quantity, 2);
      assert.equal(
        (await lastAudit(t.app, refused.account.id, 'seat.release_requested')).metadata.status,
        'billing_provider_refused',
      );

      const broken = await linkedTeam(2);
      for (let i = 0; i < 3; i++)
        stripe.failNext('GET', `/v1/subscription_items/${broken.item.id}`, {
          status: 500,
          body: { error: { type: 'api_error', message: 'Something went wrong' } },
        });
      const failed = await remove(broken);
      assert.deepEqual(failed.body.data.seatRelease, { status: 'billing_provider_error' });
      assert.equal(await stillMember(broken), false);

      const empty = await linkedTeam(0);
      assert.deepEqual((await remove(empty)).body.data.seatRelease, { status: 'seat_minimum_reached' });

      const unlinked = await makeTeam(t.app, ['member']);
      const res2 = await call(
        t,
        'DELETE',
        `accounts/${unlinked.account.id}/members/${unlinked.members.member.user.id}?releaseSeat=true`,
        unlinked.owner.headers,
      );
      assert.deepEqual(res2.body.data.seatRelease, { status: 'billing_account_not_linked' });
    });
  });

  it('the secret key appears in no log line and no answer', async () => {
    // A key Stripe refuses: the failure is answered and logged without the key.
    const other = await createTestApp({
      env: stripe.env({ GANTRY_STRIPE_SECRET_KEY: 'sk_test_refusedKey0123456789', GANTRY_LOG_LEVEL: 'debug' }),
    });
    try {
      const { owner } = await makeTeam(other.app);
      const res = await call(other, 'POST', 'billing/checkout', owner.headers, { amount: 1000 });
      assert.equal(res.status, 502);
      assert.equal(res.body.error!.code, 'UPSTREAM_FAILED');
      assert.doesNotMatch(JSON.stringify(res.body), /sk_test_/);
      assert.ok(other.logs.some((line) => line.includes('stripe checkout session failed')));
      assert.ok(!other.logs.some((line) => line.includes('sk_test_refusedKey')));
    } finally {
      await other.close();
    }
    assert.ok(t.logs.length > 0);
    assert.ok(!t.logs.some((line) => line.includes(FAKE_STRIPE_KEY)));
  });
});

describe('billing without Stripe configured', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('checkout and webhook answer 503 NOT_CONFIGURED; member removal reports billing_not_configured', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['member']);
    const checkout = await call(t, 'POST', 'billing/checkout', owner.headers, { amount: 1000 });
    assert.equal(checkout.status, 503);
    assert.equal(checkout.body.error!.code, 'NOT_CONFIGURED');
    assert.match(checkout.body.error!.message, /GANTRY_STRIPE_SECRET_KEY/);
    const hook = await t.inject({
      method: 'POST',
      url: '/api/v1/billing/webhooks/stripe',
      payload: '{}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(hook.statusCode, 503);
    assert.equal((hook.result as { error: { code: string } }).error.code, 'NOT_CONFIGURED');
    const removed = await call(
      t,
      'DELETE',
      `accounts/${account.id}/members/${members.member.user.id}?releaseSeat=true`,
      owner.headers,
    );
    assert.deepEqual(removed.body.data.seatRelease, { status: 'billing_not_configured' });
    await assert.rejects(t.app.services.billing.linkAccount((await makeAccount(t.app, owner.user.id)).id, {}), {
      code: 'NOT_CONFIGURED',
    });
  });

  it('with a key but no webhook secret, checkout works and the webhook answers 503', async () => {
    const stripe = await startFakeStripe();
    const other = await createTestApp({ env: stripe.env({ GANTRY_STRIPE_WEBHOOK_SECRET: '' }) });
    try {
      const user = await signedInUser(other.app);
      assert.equal((await call(other, 'POST', 'billing/checkout', user.headers, { amount: 1000 })).status, 201);
      const body = stripe.event('invoice.paid', {});
      const hook = await other.inject({
        method: 'POST',
        url: '/api/v1/billing/webhooks/stripe',
        payload: body,
        headers: { 'content-type': 'application/json', 'stripe-signature': stripe.sign(body) },
      });
      assert.equal(hook.statusCode, 503);
    } finally {
      await other.close();
      await stripe.close();
    }
  });
});
