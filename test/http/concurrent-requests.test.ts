import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, insertionOrder, type TestApp } from '../helpers/app.js';
import { makeAccount, makeTeam, makeUser } from '../helpers/factories.js';
import { call } from '../helpers/accounts.js';
import { userPrincipal } from '../../src/http/auth.js';
import { ManualClock } from '../../src/lib/clock.js';
import { isUniqueViolation } from '../../src/db/engine.js';

/**
 * Rules that must hold when requests run at the same time, as they do over a PostgreSQL pool
 * (docs/postgres.md, Transactions): counters in one statement, uniqueness in the schema, and
 * memberships in insertion order on both engines.
 */
let t: TestApp;
const clock = new ManualClock('2026-05-01T10:00:00Z');
before(async () => {
  t = await createTestApp({ clock, env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } });
});
after(async () => t.close());

let ip = 0;
const post = (url: string, payload: object) =>
  t.inject({ method: 'POST', url: `/api/v1${url}`, payload, remoteAddress: `10.9.0.${ip++ % 250}` });

describe('concurrent writes', () => {
  test('12 wrong recovery-code guesses at once count exactly 5 and burn the code', async () => {
    const user = await makeUser(t.app);
    assert.equal((await post('/auth/forgot-password', { email: user.email })).statusCode, 202);
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .select('body_text')
      .where('to_address', '=', user.email)
      .where('kind', '=', 'password_recovery')
      .orderBy(insertionOrder(), 'desc')
      .executeTakeFirstOrThrow();
    const code = /code is (\d{6})/.exec(mail.body_text)![1];
    const wrong = Array.from({ length: 12 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'));
    const answers = await Promise.all(
      wrong.map((guess) => post('/auth/exchange-recovery-code', { email: user.email, code: guess })),
    );
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      wrong.map(() => 410),
    );
    const row = await t.app.kernel.db
      .selectFrom('one_time_tokens')
      .select(['attempts', 'consumed_at'])
      .where('user_id', '=', user.id)
      .where('purpose', '=', 'password_recovery_code')
      .executeTakeFirstOrThrow();
    assert.equal(row.attempts, 5);
    assert.notEqual(row.consumed_at, null);
    const right = await post('/auth/exchange-recovery-code', { email: user.email, code });
    assert.equal(right.statusCode, 410, 'the burnt code no longer works');
  });

  test('the count holds without a transaction around it: 12 guesses at once on the pool count 5', async () => {
    const user = await makeUser(t.app);
    const codes = t.app.services.identity.oneTimeTokens;
    const db = t.app.kernel.db;
    await codes.issueCode(db, { userId: user.id, purpose: 'race_code', ttlSec: 600, code: '111111' });
    const guesses = Array.from({ length: 12 }, (_, i) =>
      codes.consumeCode(db, user.id, 'race_code', `22222${i % 10}`, 5),
    );
    assert.deepEqual(await Promise.all(guesses), Array(12).fill(null));
    const row = await db
      .selectFrom('one_time_tokens')
      .select(['attempts', 'consumed_at'])
      .where('user_id', '=', user.id)
      .where('purpose', '=', 'race_code')
      .executeTakeFirstOrThrow();
    assert.equal(row.attempts, 5);
    assert.notEqual(row.consumed_at, null);
    assert.equal(await codes.consumeCode(db, user.id, 'race_code', '111111', 5), null);
  });

  test('the schema itself refuses a second workspace name (any case) and a second pending invitation', async () => {
    const { account } = await makeTeam(t.app);
    const db = t.app.kernel.db;
    const now = clock.now().toISOString();
    const workspace = (id: string, name: string) =>
      db
        .insertInto('workspaces')
        .values({ id, account_id: account.id, name, is_default: 0, created_at: now, updated_at: now })
        .execute();
    await workspace('ws-race-1', 'Billing');
    await assert.rejects(workspace('ws-race-2', 'BILLING'), (err) => isUniqueViolation(err));
    const invitation = (id: string, status: string) =>
      db
        .insertInto('account_invitations')
        .values({
          id,
          account_id: account.id,
          email: 'twice@example.test',
          role: 'viewer',
          status,
          invited_by: 'system',
          token_id: id,
          created_at: now,
          expires_at: now,
        })
        .execute();
    await invitation('inv-race-1', 'revoked');
    await invitation('inv-race-2', 'pending');
    await invitation('inv-race-3', 'accepted');
    await assert.rejects(invitation('inv-race-4', 'pending'), (err) => isUniqueViolation(err));
  });

  test('two workspaces named alike at once: one 201, the other 409 CONFLICT', async () => {
    const { owner, account } = await makeTeam(t.app);
    const answers = await Promise.all(
      ['Research', 'research', 'RESEARCH'].map((name) =>
        call(t, 'POST', `accounts/${account.id}/workspaces`, owner.headers, { name }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409, 409]);
    for (const refused of answers.filter((a) => a.status === 409)) assert.equal(refused.body.error?.code, 'CONFLICT');
    const names = await t.app.kernel.db
      .selectFrom('workspaces')
      .select('name')
      .where('account_id', '=', account.id)
      .where('is_default', '=', 0)
      .execute();
    assert.equal(names.length, 1);
  });

  test('the same email invited twice at once: one pending invitation, the other 409 CONFLICT', async () => {
    const { owner, account } = await makeTeam(t.app);
    const email = `race-${Date.now().toString(36)}@example.test`;
    const answers = await Promise.all(
      ['viewer', 'analyst', 'admin'].map((role) =>
        call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email, role }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409, 409]);
    for (const refused of answers.filter((a) => a.status === 409)) assert.equal(refused.body.error?.code, 'CONFLICT');
    const pending = await t.app.kernel.db
      .selectFrom('account_invitations')
      .select('id')
      .where('account_id', '=', account.id)
      .where('email', '=', email)
      .where('status', '=', 'pending')
      .execute();
    assert.equal(pending.length, 1);
  });

  test('two resends at once count two: sentCount 3, each answer its own count (the quota allows two)', async () => {
    const { owner, account } = await makeTeam(t.app);
    const email = `resent-${Date.now().toString(36)}@example.test`;
    const made = await call(t, 'POST', `accounts/${account.id}/invitations`, owner.headers, { email, role: 'viewer' });
    assert.equal(made.status, 201);
    const url = `accounts/${account.id}/invitations/${made.body.data.id}/resend`;
    const answers = await Promise.all([1, 2].map(() => call(t, 'POST', url, owner.headers)));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    assert.deepEqual(answers.map((a) => a.body.data.sentCount).sort(), [2, 3]);
  });

  test('memberships made in one millisecond keep their insertion order', async () => {
    const user = await makeUser(t.app);
    const made: string[] = [];
    for (let i = 0; i < 6; i++) made.push((await makeAccount(t.app, user.id, { legalName: `Tie ${i}` })).id);
    const usable = await t.app.services.accounts.workspaces.usable(userPrincipal(user.id));
    assert.deepEqual(
      usable.map((w) => w.account.id),
      made,
    );
    const current = await t.app.services.accounts.access.current(userPrincipal(user.id));
    assert.equal(current.accountId, made[0]);
  });
});
