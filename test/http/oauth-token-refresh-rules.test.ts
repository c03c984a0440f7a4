import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE, untilBackendWaitsOnLock } from '../helpers/postgres.js';
import { makeUser } from '../helpers/factories.js';
import { ManualClock } from '../../src/lib/clock.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { resourceUrl } from '../../src/oauth/resources.js';
import { approvedCodeForm, basic, form, FORM_HEADERS, makeClient } from '../helpers/oauth.js';

const TOKEN = '/api/v1/oauth/token';

/**
 * Every way a refresh token can be refused, with its exact answer, and what each leaves behind.
 * On PostgreSQL the usual case runs as one statement that finds nothing when a rule fails; the
 * transactional path then tells which rule (src/oauth/grants/refresh-batches.ts,
 * refresh-token.ts): these pin that every answer is the same as on SQLite.
 */
describe('refresh_token grant: each refusal and its answer', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00Z');
  before(async () => (t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } })));
  after(() => t.close());

  type Client = Awaited<ReturnType<typeof makeClient>>;

  async function token(payload: Record<string, string>, client: Client) {
    const res = await t.inject({
      method: 'POST',
      url: TOKEN,
      headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
      payload: form(payload),
    });
    return Object.assign(res, { json: () => JSON.parse(res.payload) as Record<string, string> });
  }

  /** A fresh authorization for the REST API (email:read profile:read) and its first refresh token. */
  async function grantOf(client: Client) {
    const user = await makeUser(t.app);
    const res = await token(await approvedCodeForm(t, client.clientId, user.id), client);
    assert.equal(res.statusCode, 200, res.payload);
    return res.json().refresh_token;
  }

  const refresh = (client: Client, refreshToken: string, extra: Record<string, string> = {}) =>
    token({ grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, client);

  async function revokeReason(refreshToken: string) {
    const row = await t.app.kernel.db
      .selectFrom('oauth_refresh_tokens as r')
      .innerJoin('oauth_grants as g', 'g.id', 'r.grant_id')
      .select(['g.revoke_reason', 'r.consumed_at'])
      .where('r.token_hash', '=', sha256Hex(refreshToken))
      .executeTakeFirstOrThrow();
    return row;
  }

  function assertRefused(res: Awaited<ReturnType<typeof refresh>>, error: string, description: string) {
    assert.equal(res.statusCode, 400, res.payload);
    assert.deepEqual(res.json(), { error, error_description: description });
  }

  test('an unknown token: invalid_grant', async () => {
    const client = await makeClient(t);
    assertRefused(await refresh(client, 'no-such-token'), 'invalid_grant', 'The refresh token is invalid');
  });

  test("another client's token: invalid_grant, and its family left alone", async () => {
    const [owner, other] = [await makeClient(t), await makeClient(t)];
    const refreshToken = await grantOf(owner);
    assertRefused(
      await refresh(other, refreshToken),
      'invalid_grant',
      'The refresh token was issued to another client',
    );
    assert.deepEqual(await revokeReason(refreshToken), { revoke_reason: null, consumed_at: null });
    assert.equal((await refresh(owner, refreshToken)).statusCode, 200);
  });

  test('a token of a revoked authorization: invalid_grant', async () => {
    const client = await makeClient(t);
    const refreshToken = await grantOf(client);
    const revoke = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/revoke',
      headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
      payload: form({ token: refreshToken }),
    });
    assert.equal(revoke.statusCode, 200, revoke.payload);
    assertRefused(await refresh(client, refreshToken), 'invalid_grant', 'The refresh token was revoked');
  });

  test('a used token shown again: invalid_grant, and the whole family is revoked', async () => {
    const client = await makeClient(t);
    const first = await grantOf(client);
    const second = (await refresh(client, first)).json().refresh_token;
    assertRefused(
      await refresh(client, first),
      'invalid_grant',
      'The refresh token was already used; the authorization is revoked',
    );
    assert.equal((await revokeReason(second)).revoke_reason, 'refresh_token_reuse');
    assertRefused(await refresh(client, second), 'invalid_grant', 'The refresh token was revoked');
  });

  test('a wider scope, or another resource: refused, and the token is kept', async () => {
    const client = await makeClient(t);
    const refreshToken = await grantOf(client);
    assertRefused(
      await refresh(client, refreshToken, { scope: 'email:read wallet:read' }),
      'invalid_scope',
      'The requested scope exceeds the one granted',
    );
    assertRefused(
      await refresh(client, refreshToken, { resource: resourceUrl(t.app.kernel.config.publicUrl, 'mcp') }),
      'invalid_target',
      'resource differs from the one this authorization was granted for',
    );
    assert.equal((await revokeReason(refreshToken)).consumed_at, null);
    // The same resource and a narrower scope pass every rule.
    const ok = await refresh(client, refreshToken, {
      scope: 'profile:read',
      resource: resourceUrl(t.app.kernel.config.publicUrl, 'api'),
    });
    assert.equal(ok.statusCode, 200, ok.payload);
    assert.equal(ok.json().scope, 'profile:read');
  });

  test('an expired token: invalid_grant, and it is spent', async () => {
    const client = await makeClient(t);
    const refreshToken = await grantOf(client);
    clock.advance(30 * 24 * 3_600_000);
    assertRefused(await refresh(client, refreshToken), 'invalid_grant', 'The refresh token has expired');
    assert.notEqual((await revokeReason(refreshToken)).consumed_at, null);
  });

  test('a token consumed by another use after it was found is a reuse: the family is revoked', async () => {
    const client = await makeClient(t);
    const refreshToken = await grantOf(client);
    if (TEST_ENGINE === 'sqlite') {
      // One connection: nothing runs between finding and consuming; two uses in a row are the case.
      assert.equal((await refresh(client, refreshToken)).statusCode, 200);
    } else {
      // PostgreSQL: another transaction holds the token's row while the grant finds it (a read
      // waits for nobody) and then waits to consume it; that transaction consumes it and commits.
      const db = t.app.kernel.db;
      await db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        await sql`update oauth_refresh_tokens set consumed_at = ${clock.now().toISOString()}
          where token_hash = ${sha256Hex(refreshToken)}`.execute(conn);
        const pending = refresh(client, refreshToken);
        await untilBackendWaitsOnLock(db);
        await sql`commit`.execute(conn);
        assertRefused(
          await pending,
          'invalid_grant',
          'The refresh token was already used; the authorization is revoked',
        );
      });
      assert.equal((await revokeReason(refreshToken)).revoke_reason, 'refresh_token_reuse');
      return;
    }
    assertRefused(
      await refresh(client, refreshToken),
      'invalid_grant',
      'The refresh token was already used; the authorization is revoked',
    );
    assert.equal((await revokeReason(refreshToken)).revoke_reason, 'refresh_token_reuse');
  });
});
