import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE } from '../helpers/postgres.js';
import { makeUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import type { EndpointCaller } from '../../src/oauth/endpoint-limits.js';
import { OAuthError } from '../../src/oauth/errors.js';
import type { TokenResponse } from '../../src/oauth/tokens.js';
import { approvedCodeForm, basic, makeClient } from '../helpers/oauth.js';

/**
 * Refreshes that arrive together: on PostgreSQL those of one turn of the event loop are one
 * statement (src/oauth/grants/refresh-batches.ts), on SQLite one group commit
 * (src/oauth/hot-store.ts). Each must get what it would have got alone, in arrival order.
 * They are started in one turn through the service, as the route calls it.
 */
describe('refresh grants arriving together', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00Z');
  // 120 per minute times 0.025: three refreshes per user and minute.
  before(async () => (t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '0.025' } })));
  after(() => t.close());

  type Client = Awaited<ReturnType<typeof makeClient>>;
  type Outcome = { ok: true; refreshToken: string; remaining: number | undefined } | { ok: false; error: OAuthError };

  const token = (client: Client, body: Record<string, string>, caller: EndpointCaller = { address: '10.80.0.1' }) =>
    // These grants always answer a refresh token (only an ID-JAG's answer has none).
    t.app.services.oauth.token(
      { authorization: basic(client.clientId, client.clientSecret!), body },
      caller,
    ) as Promise<TokenResponse>;

  /** Every call started in this turn; each settles to its tokens (and remaining budget) or its error. */
  function together(calls: Array<{ client: Client; body: Record<string, string> }>): Promise<Outcome[]> {
    return Promise.all(
      calls.map(async ({ client, body }): Promise<Outcome> => {
        const caller: EndpointCaller = { address: '10.80.0.1' };
        try {
          const issued = await token(client, body, caller);
          return { ok: true, refreshToken: issued.refresh_token, remaining: caller.rateLimit?.remaining };
        } catch (error) {
          if (!(error instanceof OAuthError)) throw error;
          return { ok: false, error };
        }
      }),
    );
  }

  /** A user's authorizations of the client, a first refresh token each; then a fresh meter window. */
  async function grantsOf(client: Client, count: number) {
    const user = await makeUser(t.app);
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) {
      tokens.push((await token(client, await approvedCodeForm(t, client.clientId, user.id))).refresh_token);
      // The code exchanges count on the same meter: each in a window of its own.
      clock.advance(61_000);
    }
    return { user, tokens };
  }

  const refreshOf = (client: Client, refreshToken: string, extra: Record<string, string> = {}) => ({
    client,
    body: { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra },
  });

  async function batchSizes() {
    const values = (await t.app.kernel.metrics.registry.getSingleMetric('gantry_oauth_refresh_batch_size')?.get())
      ?.values;
    const read = (name: string) => values?.find((v) => (v as { metricName?: string }).metricName === name)?.value ?? 0;
    return { count: read('gantry_oauth_refresh_batch_size_count'), sum: read('gantry_oauth_refresh_batch_size_sum') };
  }

  /** On PostgreSQL, that the calls went as one statement of `size`; SQLite has no such statement. */
  async function assertOneBatch(before: { count: number; sum: number }, size: number) {
    const after = await batchSizes();
    if (TEST_ENGINE === 'sqlite') return assert.deepEqual(after, { count: 0, sum: 0 });
    assert.deepEqual({ count: after.count - before.count, sum: after.sum - before.sum }, { count: 1, sum: size });
  }

  test("one user's refreshes: the meter counts them in arrival order; past the limit a 429, the token kept", async () => {
    const client = await makeClient(t);
    const { tokens } = await grantsOf(client, 4);
    const before = await batchSizes();
    const outcomes = await together(tokens.map((refreshToken) => refreshOf(client, refreshToken)));
    await assertOneBatch(before, 4);
    assert.deepEqual(
      outcomes.map((o) => (o.ok ? ['ok', o.remaining] : [o.error.status, o.error.error])),
      [
        ['ok', 2],
        ['ok', 1],
        ['ok', 0],
        [429, 'invalid_request'],
      ],
    );
    const refused = outcomes[3] as Extract<Outcome, { ok: false }>;
    assert.equal(refused.error.headers['Retry-After'], '60');
    // The refused one's token was not consumed: it works in the next window.
    clock.advance(61_000);
    const later = await token(client, refreshOf(client, tokens[3]).body);
    assert.ok(later.access_token);
  });

  test('one token twice: one use wins, the other is a reuse, and the family is revoked', async () => {
    const client = await makeClient(t);
    const {
      tokens: [refreshToken],
    } = await grantsOf(client, 1);
    const before = await batchSizes();
    const outcomes = await together([refreshOf(client, refreshToken), refreshOf(client, refreshToken)]);
    await assertOneBatch(before, 2);
    const won = outcomes.filter((o) => o.ok);
    const lost = outcomes.filter((o) => !o.ok) as Array<Extract<Outcome, { ok: false }>>;
    assert.equal(won.length, 1);
    assert.deepEqual(
      lost.map((o) => o.error.body()),
      [
        {
          error: 'invalid_grant',
          error_description: 'The refresh token was already used; the authorization is revoked',
        },
      ],
    );
    const grant = await t.app.kernel.db
      .selectFrom('oauth_refresh_tokens as r')
      .innerJoin('oauth_grants as g', 'g.id', 'r.grant_id')
      .select(['g.revoke_reason'])
      .where('r.token_hash', '=', sha256Hex(refreshToken))
      .executeTakeFirstOrThrow();
    assert.equal(grant.revoke_reason, 'refresh_token_reuse');
    // The winner's new token went with its family.
    await assert.rejects(token(client, refreshOf(client, (won[0] as { refreshToken: string }).refreshToken).body), {
      error: 'invalid_grant',
      description: 'The refresh token was revoked',
    });
  });

  test('refreshes of several clients and users, some refused by a rule: each answered as alone', async () => {
    // Each token is shown once: one token in two requests at once is a reuse (above).
    const acme = await makeClient(t);
    const other = await makeClient(t, { name: 'Other' });
    const a = await grantsOf(acme, 4);
    const b = await grantsOf(other, 1);
    const before = await batchSizes();
    const outcomes = await together([
      refreshOf(acme, a.tokens[0]),
      refreshOf(acme, 'not-a-token'),
      refreshOf(other, b.tokens[0]),
      refreshOf(acme, a.tokens[1], { scope: 'email:read execution:run' }),
      refreshOf(other, a.tokens[2]),
      refreshOf(acme, a.tokens[3], { scope: 'email:read' }),
    ]);
    await assertOneBatch(before, 6);
    assert.deepEqual(
      outcomes.map((o) => (o.ok ? 'ok' : `${o.error.error}: ${o.error.description}`)),
      [
        'ok',
        'invalid_grant: The refresh token is invalid',
        'ok',
        'invalid_scope: The requested scope exceeds the one granted',
        'invalid_grant: The refresh token was issued to another client',
        'ok',
      ],
    );
    // The refused ones kept their tokens; the narrowed one's successor keeps the whole grant.
    clock.advance(61_000);
    const kept = await Promise.all([a.tokens[1], a.tokens[2]].map((rt) => token(acme, refreshOf(acme, rt).body)));
    assert.deepEqual(
      kept.map((issued) => issued.scope),
      ['email:read profile:read', 'email:read profile:read'],
    );
    const narrowed = outcomes[5] as Extract<Outcome, { ok: true }>;
    assert.equal((await token(acme, refreshOf(acme, narrowed.refreshToken).body)).scope, 'email:read profile:read');
  });
});
