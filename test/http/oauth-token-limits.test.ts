import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE, untilBackendWaitsOnLock } from '../helpers/postgres.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { makeUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { approvedCodeForm, basic, form, FORM_HEADERS, makeClient } from '../helpers/oauth.js';

const TOKEN = '/api/v1/oauth/token';
const REVOKE = '/api/v1/oauth/revoke';

/**
 * The token and revoke endpoints count per client and user, and failed client authentication
 * per address and per client_id (docs/oauth.md, Rate limits). Default multiplier (1).
 */
describe('token and revoke rate limits', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00Z');
  before(async () => (t = await createTestApp({ clock })));
  after(() => t.close());

  type Client = Awaited<ReturnType<typeof makeClient>>;

  async function post(url: string, payload: Record<string, string>, remoteAddress: string, authorization?: string) {
    const res = await t.inject({
      method: 'POST',
      url,
      remoteAddress,
      headers: { ...FORM_HEADERS, ...(authorization ? { authorization } : {}) },
      payload: form(payload),
    });
    return Object.assign(res, { json: () => JSON.parse(res.payload) as Record<string, string> });
  }

  /** A user's first tokens for the client, through a code the user approved (one token request). */
  async function tokensFor(client: Client, remoteAddress: string) {
    const user = await makeUser(t.app);
    const res = await post(
      TOKEN,
      await approvedCodeForm(t, client.clientId, user.id, ['email:read']),
      remoteAddress,
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(res.statusCode, 200, res.payload);
    return { user, refreshToken: res.json().refresh_token };
  }

  /** How many statements of PostgreSQL's refresh batches ran (none on SQLite). */
  async function refreshBatches() {
    const values = (await t.app.kernel.metrics.registry.getSingleMetric('gantry_oauth_refresh_batch_size')?.get())
      ?.values;
    return (
      values?.find((v) => (v as { metricName?: string }).metricName === 'gantry_oauth_refresh_batch_size_count')
        ?.value ?? 0
    );
  }

  const refresh = (client: Client, refreshToken: string, remoteAddress: string, secret = client.clientSecret!) =>
    post(
      TOKEN,
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      remoteAddress,
      basic(client.clientId, secret),
    );

  test('a partner refreshing for many users from one address is not throttled by address; each user has the 120 per minute', async () => {
    const ip = '10.70.0.1';
    const client = await makeClient(t);
    const chains = [await tokensFor(client, ip), await tokensFor(client, ip), await tokensFor(client, ip)];
    // 150 refreshes from one address within one minute (the clock never moves): more than the
    // 120 an address had, 51 requests per user with the code exchange.
    for (let i = 0; i < 150; i++) {
      const chain = chains[i % 3];
      const res = await refresh(client, chain.refreshToken, ip);
      assert.equal(res.statusCode, 200, `refresh ${i + 1}: ${res.payload}`);
      assert.equal(res.headers['x-ratelimit-limit'], '120');
      assert.equal(res.headers['x-ratelimit-remaining'], String(120 - 1 - Math.floor(i / 3) - 1));
      chain.refreshToken = res.json().refresh_token;
    }

    // The first user goes on alone up to the 120 of its own bucket; the 121st is refused.
    const [first, second] = chains;
    for (let i = 51; i < 120; i++) {
      const res = await refresh(client, first.refreshToken, ip);
      assert.equal(res.statusCode, 200, res.payload);
      first.refreshToken = res.json().refresh_token;
    }
    const refused = await refresh(client, first.refreshToken, ip);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error, 'invalid_request');
    assert.match(refused.json().error_description, /Retry-After/);
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
    assert.equal(refused.headers['cache-control'], 'no-store');
    assert.equal(refused.json().access_token, undefined);

    // The others are untouched, and the refused token was not consumed: it works after the window.
    assert.equal((await refresh(client, second.refreshToken, ip)).statusCode, 200);
    clock.advance(60_000);
    const retried = await refresh(client, first.refreshToken, ip);
    assert.equal(retried.statusCode, 200, retried.payload);
    assert.equal(retried.headers['x-ratelimit-remaining'], '119');
  });

  test('a refresh that waits for its token row is charged once', async () => {
    const ip = '10.72.0.1';
    const client = await makeClient(t);
    const { refreshToken } = await tokensFor(client, ip);
    if (TEST_ENGINE === 'sqlite') {
      // One connection: nothing holds the row while the grant runs; the charge is the plain one.
      const res = await refresh(client, refreshToken, ip);
      assert.equal(res.headers['x-ratelimit-remaining'], String(120 - 2));
      return;
    }
    // PostgreSQL: another transaction holds the token's row until the grant, having charged the
    // meter as it found the token, waits to consume it; once that commits the grant goes on.
    const db = t.app.kernel.db;
    const res = await db.connection().execute(async (conn) => {
      await sql`begin isolation level serializable`.execute(conn);
      await sql`update oauth_refresh_tokens set expires_at = expires_at
        where token_hash = ${sha256Hex(refreshToken)}`.execute(conn);
      const pending = refresh(client, refreshToken, ip);
      await untilBackendWaitsOnLock(db);
      await sql`commit`.execute(conn);
      return pending;
    });
    assert.equal(res.statusCode, 200, res.payload);
    assert.equal(res.headers['x-ratelimit-remaining'], String(120 - 2), 'the code exchange and this refresh, once');
  });

  test('guessing a client secret from one address is cut at 20 per minute, before the secret is checked', async () => {
    const ip = '10.71.0.1';
    const client = await makeClient(t);
    const other = await makeClient(t);
    const { refreshToken } = await tokensFor(client, '10.71.9.9');
    const { refreshToken: otherToken } = await tokensFor(other, '10.71.9.9');
    for (let i = 0; i < 20; i++) {
      const res = await refresh(client, refreshToken, ip, `guess-${i}`);
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error, 'invalid_client');
      assert.equal(res.headers['x-ratelimit-limit'], '20');
      assert.equal(res.headers['x-ratelimit-remaining'], String(19 - i));
    }
    // The right secret is refused now, as a wrong one is; nor is another client's from that address.
    const batchesBefore = await refreshBatches();
    const refused = await refresh(client, refreshToken, ip);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error, 'invalid_request');
    assert.equal(refused.headers['retry-after'], '60');
    const wrong = await refresh(client, refreshToken, ip, 'guess-20');
    assert.equal(wrong.statusCode, 429);
    assert.deepEqual(wrong.json(), refused.json());
    // On PostgreSQL both went through the refresh batches' statement, which read the spent
    // budget: one path whether the secret is right or wrong (docs/security.md).
    assert.equal(await refreshBatches(), batchesBefore + (TEST_ENGINE === 'postgres' ? 2 : 0));
    assert.equal((await refresh(other, otherToken, ip)).statusCode, 429);
    // The refresh token is intact: the real client, from its own address, uses it.
    const real = await refresh(other, otherToken, '10.71.0.2');
    assert.equal(real.statusCode, 200, real.payload);
    clock.advance(60_000);
    assert.equal((await refresh(client, refreshToken, ip)).statusCode, 200);
  });

  test('guessing spread over many addresses is cut at 20 per minute per client_id; revoke shares the budget; the right secret still works', async () => {
    const client = await makeClient(t);
    const { refreshToken } = await tokensFor(client, '10.72.9.9');
    for (let i = 0; i < 10; i++)
      assert.equal((await refresh(client, refreshToken, `10.72.1.${i}`, `guess-${i}`)).statusCode, 401);
    for (let i = 0; i < 10; i++) {
      const res = await post(REVOKE, { token: refreshToken }, `10.72.2.${i}`, basic(client.clientId, `guess-${i}`));
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error, 'invalid_client');
    }
    // Wrong secrets from fresh addresses now get 429 at both endpoints.
    const refused = await refresh(client, refreshToken, '10.72.3.1', 'guess-a');
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error, 'invalid_request');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    const revokeRefused = await post(REVOKE, { token: refreshToken }, '10.72.3.2', basic(client.clientId, 'guess-b'));
    assert.equal(revokeRefused.statusCode, 429);
    assert.equal(revokeRefused.json().error, 'invalid_request');
    // The right secret is not locked out by the client_id's budget: nothing was revoked, the
    // token refreshes, and the client revokes what it holds.
    const refreshed = await refresh(client, refreshToken, '10.72.3.3');
    assert.equal(refreshed.statusCode, 200, refreshed.payload);
    const revoked = await post(
      REVOKE,
      { token: refreshed.json().refresh_token },
      '10.72.3.4',
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(revoked.statusCode, 200, revoked.payload);
    assert.equal((await refresh(client, refreshed.json().refresh_token, '10.72.3.3')).json().error, 'invalid_grant');
  });

  test('a distributed guessing loop gets 429s but never locks the partner out: its right secret refreshes for every user', async () => {
    const partnerIp = '10.76.9.9';
    const client = await makeClient(t);
    const chains = [
      await tokensFor(client, partnerIp),
      await tokensFor(client, partnerIp),
      await tokensFor(client, partnerIp),
    ];
    // 20 wrong secrets from 20 addresses, at token and revoke, spend the client_id's budget.
    for (let i = 0; i < 20; i++) {
      const res =
        i % 2 === 0
          ? await refresh(client, chains[i % 3].refreshToken, `10.76.1.${i}`, `guess-${i}`)
          : await post(
              REVOKE,
              { token: chains[i % 3].refreshToken },
              `10.76.1.${i}`,
              basic(client.clientId, `guess-${i}`),
            );
      assert.equal(res.statusCode, 401, res.payload);
      assert.equal(res.json().error, 'invalid_client');
    }
    const spent = await refresh(client, chains[0].refreshToken, '10.76.2.1', 'guess-x');
    assert.equal(spent.statusCode, 429, spent.payload);

    // The partner, from its own address, refreshes for each user as usual.
    for (const chain of chains) {
      const res = await refresh(client, chain.refreshToken, partnerIp);
      assert.equal(res.statusCode, 200, res.payload);
      assert.ok(res.json().access_token);
      assert.equal(res.headers['x-ratelimit-limit'], '120');
      chain.refreshToken = res.json().refresh_token;
    }

    // Further guesses, at both endpoints, get 429 in RFC 6749 form, and revoke nothing.
    for (let i = 0; i < 6; i++) {
      const token = chains[i % 3].refreshToken;
      const res =
        i % 2 === 0
          ? await refresh(client, token, `10.76.3.${i}`, `guess-more-${i}`)
          : await post(REVOKE, { token }, `10.76.3.${i}`, basic(client.clientId, `guess-more-${i}`));
      assert.equal(res.statusCode, 429, res.payload);
      assert.equal(res.json().error, 'invalid_request');
      assert.equal(res.json().access_token, undefined);
      assert.ok(Number(res.headers['retry-after']) >= 1);
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    // Those 429s still count against their address: 20 wrong guesses from one address, then
    // even the right secret from there is refused before it is looked at.
    const guesser = '10.76.4.1';
    for (let i = 0; i < 20; i++)
      assert.equal((await refresh(client, chains[0].refreshToken, guesser, `guess-ip-${i}`)).statusCode, 429);
    const cut = await refresh(client, chains[0].refreshToken, guesser);
    assert.equal(cut.statusCode, 429);

    for (const chain of chains) {
      const res = await refresh(client, chain.refreshToken, partnerIp);
      assert.equal(res.statusCode, 200, res.payload);
      chain.refreshToken = res.json().refresh_token;
    }
  });

  test("a public client's id, which anyone may send, cannot be locked: failures claiming it count by address only", async () => {
    const app = await makeClient(t, { type: 'public' });
    const user = await makeUser(t.app);
    const exchange = await approvedCodeForm(t, app.clientId, user.id, ['email:read']);
    for (let i = 0; i < 25; i++) {
      const res = await post(
        TOKEN,
        { grant_type: 'refresh_token', refresh_token: 'x' },
        `10.75.1.${i}`,
        basic(app.clientId, `guess-${i}`),
      );
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error, 'invalid_client');
    }
    const res = await post(TOKEN, { ...exchange, client_id: app.clientId }, '10.75.2.1');
    assert.equal(res.statusCode, 200, res.payload);
    assert.ok(res.json().access_token);
  });

  test('an authenticated client failing grant after grant from one address is cut at 120 per minute there', async () => {
    const client = await makeClient(t);
    const { refreshToken } = await tokensFor(client, '10.73.9.9');
    for (let i = 0; i < 120; i++) {
      const res = await refresh(client, `not-a-token-${i}`, '10.73.0.1');
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_grant');
    }
    const refused = await refresh(client, 'not-a-token', '10.73.0.1');
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '60');
    // A good token from there too, before anything is counted or consumed: neither its user's
    // budget nor the token is spent.
    const good = await refresh(client, refreshToken, '10.73.0.1');
    assert.equal(good.statusCode, 429);
    assert.equal(good.json().error, 'invalid_request');
    assert.equal(good.headers['x-ratelimit-remaining'], '0');
    // Another address of the same client, and its failure budget of client authentication, are untouched.
    const elsewhere = await refresh(client, refreshToken, '10.73.0.2');
    assert.equal(elsewhere.statusCode, 200, elsewhere.payload);
    assert.equal(elsewhere.headers['x-ratelimit-remaining'], String(120 - 2), 'the code exchange and this refresh');
  });

  test('revoke counts per client and user of the token, and a token naming nobody per client and address', async () => {
    const client = await makeClient(t);
    const { refreshToken } = await tokensFor(client, '10.74.9.9');
    const revoked = await post(
      REVOKE,
      { token: refreshToken },
      '10.74.0.1',
      basic(client.clientId, client.clientSecret!),
    );
    assert.equal(revoked.statusCode, 200);
    assert.equal(revoked.headers['x-ratelimit-remaining'], '119');
    assert.equal((await refresh(client, refreshToken, '10.74.0.1')).json().error, 'invalid_grant');
    for (let i = 0; i < 3; i++) {
      const unknown = await post(
        REVOKE,
        { token: `unknown-${i}` },
        '10.74.0.1',
        basic(client.clientId, client.clientSecret!),
      );
      assert.equal(unknown.statusCode, 200);
      assert.equal(unknown.headers['x-ratelimit-remaining'], String(119 - i));
    }
  });
});
