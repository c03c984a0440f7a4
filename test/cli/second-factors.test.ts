import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { signedInUser } from '../helpers/factories.js';
import { credentialKeyId } from '../helpers/postgres.js';
import { SoftAuthenticator, totpAt } from '../helpers/second-factors.js';
import { sealedKeyId } from '../../src/lib/sealed.js';

/**
 * `gantry user reset-second-factors` (docs/identity.md, A lost device): the operator's way back in
 * for a user who lost their device and their recovery codes.
 */
describe('gantry user reset-second-factors', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { GANTRY_PUBLIC_URL: 'http://localhost:8080' } });
    // A running server watches the change feed; on PostgreSQL that is what delivers a rotated key.
    await t.app.kernel.changes.start(60_000);
  });
  after(() => t.close());
  const run = (args: string[]) => cli(args, { dataDir: t.dataDir });

  async function userWithFactors() {
    const me = await signedInUser(t.app);
    const { factors, passkeys } = t.app.services.identity;
    const { secret } = await factors.setupTotp(me.user);
    await factors.enableTotp(me.user, me.sessionId, totpAt(secret, new Date()));
    const device = new SoftAuthenticator('http://localhost:8080', 'localhost');
    await passkeys.register(me.user, device.register(await passkeys.registrationOptions(me.user)) as never, null);
    return { ...me, secret };
  }

  it('off a terminal it needs --yes (exit 2, nothing changed)', async () => {
    const me = await userWithFactors();
    const res = await run(['user', 'reset-second-factors', me.user.email]);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /--yes/);
    assert.equal((await t.app.services.identity.factors.state(me.user.id)).twoStep, true);
  });

  it('with --yes: two-step sign-in, recovery codes and passkeys go, the sessions end, the user is told', async () => {
    const me = await userWithFactors();
    const res = await run(['user', 'reset-second-factors', me.user.email, '--yes', '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.json(), {
      userId: me.user.id,
      twoStep: true,
      recoveryCodes: 10,
      passkeys: 1,
      endedSessions: 1,
    });
    const state = await t.app.services.identity.factors.state(me.user.id);
    assert.deepEqual(
      { twoStep: state.twoStep, passkeys: state.passkeys, hasSecondFactor: state.hasSecondFactor },
      { twoStep: false, passkeys: 0, hasSecondFactor: false },
    );
    assert.equal((await t.inject({ url: '/api/v1/auth/me', headers: me.headers })).statusCode, 401);
    const login = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: me.user.email, password: me.user.password },
    });
    assert.equal(login.statusCode, 200, 'the password alone signs in again');
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .select('kind')
      .where('to_address', '=', me.user.email)
      .where('kind', '=', 'second_factors_reset')
      .executeTakeFirst();
    assert.ok(mail);
  });

  it('an unknown user is named in the failure', async () => {
    const res = await run(['user', 'reset-second-factors', 'nobody@example.test', '--yes']);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /nobody@example\.test/);
  });

  it('gantry secrets rotate re-seals the TOTP secrets, and codes from the app still work', async () => {
    const me = await userWithFactors();
    const sealed = async () =>
      (
        await t.app.kernel.db
          .selectFrom('user_totp')
          .select('secret_sealed')
          .where('user_id', '=', me.user.id)
          .executeTakeFirstOrThrow()
      ).secret_sealed;
    const before = await sealed();
    assert.ok(!before.includes(me.secret));
    assert.equal(sealedKeyId(before), credentialKeyId(1));
    const res = await run(['secrets', 'rotate', '--settle-ms', '0', '--yes', '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(res.json<{ resealed: Record<string, number> }>().resealed['user_totp.secret_sealed'] >= 1);
    assert.equal(sealedKeyId(await sealed()), credentialKeyId(2));
    // The running app learns the new key, then opens the re-sealed secret to check a code.
    await t.app.kernel.changes.poll();
    const proved = await t.app.services.identity.factors.stepUp(me.user.id, me.sessionId, {
      code: totpAt(me.secret, new Date(), 1),
    });
    assert.ok(proved.validUntil);
  });
});
