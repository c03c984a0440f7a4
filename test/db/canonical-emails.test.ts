import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer, makeTeam, makeUser, TEST_PASSWORD } from '../helpers/factories.js';
import { call } from '../helpers/accounts.js';
import { migrate } from '../../src/db/migrator.js';
import { migrations } from '../../migrations/index.js';
import { inTransaction } from '../../src/db/tx.js';

const MIGRATION = '0013_canonical_emails';

/**
 * Rows stored under the old rule (trim + lower case) before the canonical form: the migration
 * moves them to it, so every spelling of the mailbox reaches the one account.
 */
describe('migration to canonical email addresses', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  const db = () => t.app.kernel.db;
  const emailOf = async (id: string) =>
    (await db().selectFrom('users').select('email').where('id', '=', id).executeTakeFirstOrThrow()).email;
  /** The database as an older gantry left it: this migration not yet applied. */
  async function rerun() {
    await db().deleteFrom('schema_migrations').where('id', '=', MIGRATION).execute();
    return migrate(db(), migrations);
  }

  it('moves a legacy punycode row to the Unicode form: sign-in with either spelling, registering the other spelling is a 409, its invitation is accepted', async () => {
    const tag = `x${Date.now().toString(36)}`;
    const legacy = `${tag}@xn--bcher-kva.example`;
    const unicode = `${tag}@bücher.example`;
    const user = await makeUser(t.app, { email: `${tag}-tmp@example.test` });
    await db().updateTable('users').set({ email: legacy }).where('id', '=', user.id).execute();
    // an invitation stored in the old form too
    const { owner, account } = await makeTeam(t.app);
    const invited = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email: unicode });
    assert.equal(invited.status, 201);
    await db()
      .updateTable('account_invitations')
      .set({ email: legacy })
      .where('id', '=', invited.body.data.id)
      .execute();
    const mail = await db()
      .selectFrom('mail_outbox')
      .select('body_text')
      .where('kind', '=', 'invitation')
      .where('to_address', '=', unicode)
      .executeTakeFirstOrThrow();
    const token = decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(mail.body_text)![1]);

    const result = await rerun();
    assert.deepEqual(result.applied, [MIGRATION]);
    assert.equal(await emailOf(user.id), unicode);
    const invitation = await db()
      .selectFrom('account_invitations')
      .select('email')
      .where('id', '=', invited.body.data.id)
      .executeTakeFirstOrThrow();
    assert.equal(invitation.email, unicode);

    for (const email of [legacy, unicode, `${tag.toUpperCase()}@XN--BCHER-KVA.example`]) {
      const login = await call(t, 'POST', 'auth/login', {}, { email, password: TEST_PASSWORD });
      assert.equal(login.status, 200, `${email}: ${JSON.stringify(login.body)}`);
      assert.equal(login.body.data.user.id, user.id);
    }
    const second = await call(t, 'POST', 'auth/register', {}, { email: unicode, password: 'second-pass-1' });
    assert.equal(second.status, 409, JSON.stringify(second.body));
    assert.equal(second.body.error!.code, 'CONFLICT');
    assert.equal(
      (await db().selectFrom('users').select('id').where('email', 'in', [legacy, unicode]).execute()).length,
      1,
    );

    const session = await t.app.services.identity.sessions.start(user.id);
    const accepted = await call(t, 'POST', 'invitations/accept', bearer(session.accessToken), { token });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    const member = await db()
      .selectFrom('account_members')
      .select('status')
      .where('account_id', '=', account.id)
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    assert.equal(member.status, 'active');
  });

  it('leaves a row whose canonical form another user holds, and a refused form, as they are; the migration succeeds and each still signs in by its stored spelling', async () => {
    const tag = `y${Date.now().toString(36)}`;
    const holder = await makeUser(t.app, { email: `${tag}@bücher.example` });
    const twin = await makeUser(t.app, { email: `${tag}-twin@example.test` });
    await db()
      .updateTable('users')
      .set({ email: `${tag}@xn--bcher-kva.example` })
      .where('id', '=', twin.id)
      .execute();
    // two legacy rows with one canonical form between them, neither holding it
    const a = await makeUser(t.app, { email: `${tag}-a@example.test` });
    const b = await makeUser(t.app, { email: `${tag}-b@example.test` });
    await db()
      .updateTable('users')
      .set({ email: `${tag}@xn--mnchen-3ya.example` })
      .where('id', '=', a.id)
      .execute();
    await db()
      .updateTable('users')
      .set({ email: `\uff59${tag.slice(1)}@xn--mnchen-3ya.example` })
      .where('id', '=', b.id)
      .execute();
    // mixed scripts (a Cyrillic "а"): refused by the canonical rule
    const mixed = await makeUser(t.app, { email: `${tag}-m@example.test` });
    const refused = `p\u0430ypal-${tag}@example.test`;
    await db().updateTable('users').set({ email: refused }).where('id', '=', mixed.id).execute();

    const result = await rerun();
    assert.deepEqual(result.applied, [MIGRATION]);
    assert.equal(await emailOf(holder.id), `${tag}@bücher.example`);
    assert.equal(await emailOf(twin.id), `${tag}@xn--bcher-kva.example`);
    assert.equal(await emailOf(a.id), `${tag}@xn--mnchen-3ya.example`);
    assert.equal(await emailOf(b.id), `\uff59${tag.slice(1)}@xn--mnchen-3ya.example`);
    assert.equal(await emailOf(mixed.id), refused);

    // the canonical holder keeps its address; the left rows are found by their stored spelling
    assert.equal((await t.app.services.identity.findUserByEmail(`${tag}@xn--bcher-kva.example`))?.id, holder.id);
    assert.equal((await t.app.services.identity.findUserByEmail(`${tag}@xn--mnchen-3ya.example`))?.id, a.id);
    assert.equal((await t.app.services.identity.authenticate(`${tag}@XN--MNCHEN-3YA.example`, TEST_PASSWORD)).id, a.id);
    assert.equal((await t.app.services.identity.findUserByEmail(refused))?.id, mixed.id);
  });

  it('an email change requested before the canonical form is stored in it when confirmed', async () => {
    const tag = `z${Date.now().toString(36)}`;
    const user = await makeUser(t.app);
    const issued = await inTransaction(db(), (trx) =>
      t.app.services.identity.oneTimeTokens.issue(trx, {
        userId: user.id,
        purpose: 'email_change',
        ttlSec: 3600,
        payload: { newEmail: `${tag}@xn--bcher-kva.example` },
      }),
    );
    const confirmed = await call(t, 'POST', 'auth/confirm-email', {}, { token: issued.secret });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    assert.equal(await emailOf(user.id), `${tag}@bücher.example`);
    assert.equal(confirmed.body.data.user.email, `${tag}@bücher.example`);
  });
});
