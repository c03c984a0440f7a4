import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestApp, rawSqlite, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE } from '../helpers/postgres.js';
import { OPERATOR } from '../../src/accounts/access.js';
import { makeTeam } from '../helpers/factories.js';
import { asUser, auditOf, call, lastAudit } from '../helpers/accounts.js';
import { ManualClock } from '../../src/lib/clock.js';
import { accountsJobs } from '../../src/accounts/jobs.js';
import { collectJobs } from '../../src/app.js';

const DAY = 86_400_000;

describe('accounts: deletion, retention job, audit log paging', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-05-01T00:00:00.000Z');
  before(async () => (t = await createTestApp({ clock, env: { GANTRY_ACCOUNT_RETENTION_DAYS: '10' } })));
  after(() => t.close());

  const purgeJob = () => accountsJobs(t.app.services.accounts).find((j) => j.name === 'accounts.purge-deleted')!;
  const row = (id: string) =>
    t.app.kernel.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('the purge job is registered with the scheduler', () => {
    assert.ok(collectJobs(t.app).some((j) => j.name === 'accounts.purge-deleted'));
  });

  it('closed is restorable within the retention period, back to the status it had', async () => {
    const { owner, account } = await makeTeam(t.app);
    await call(t, 'PATCH', `accounts/${account.id}`, owner.headers, { status: 'suspended' });
    await call(t, 'DELETE', `accounts/${account.id}`, owner.headers);
    assert.equal((await row(account.id)).purge_after, new Date(clock.now().getTime() + 10 * DAY).toISOString());
    clock.advance(10 * DAY - 1000);
    assert.deepEqual(await purgeJob().run(clock.now()), []);
    const restored = await t.app.services.accounts.deletion.restore(OPERATOR, account.id);
    assert.equal(restored.status, 'suspended');
    assert.equal(restored.deleted_at, null);
    const entry = await lastAudit(t.app, account.id, 'account.restored');
    assert.equal(entry.actorId, 'system');
    await assert.rejects(t.app.services.accounts.deletion.restore(OPERATOR, account.id), { status: 409 });
  });

  it('after the retention period the job hard-deletes: members and workspaces purged, audit trail kept; no restore', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['admin', 'viewer']);
    await t.app.services.accounts.workspaces.create(OPERATOR, account.id, 'Second');
    await t.app.services.accounts.apiKeys.create(asUser(members.admin.user.id), account.id, 'k');
    const deleted = await call(t, 'DELETE', `accounts/${account.id}`, owner.headers);
    const before = (await auditOf(t.app, account.id)).length;
    clock.advance(10 * DAY);
    await assert.rejects(t.app.services.accounts.deletion.restore(OPERATOR, account.id), { status: 409 });
    const purged = await purgeJob().run(clock.now());
    assert.deepEqual(purged, [account.id]);
    const r = await row(account.id);
    assert.equal(r.status, 'hard_deleted');
    assert.equal(r.hard_deleted_at, clock.now().toISOString());
    assert.equal(r.deleted_at, deleted.body.data.deletedAt);
    assert.notEqual(r.slug, account.slug);
    const { db } = t.app.kernel;
    assert.equal(
      (await db.selectFrom('account_members').select('user_id').where('account_id', '=', account.id).execute()).length,
      0,
    );
    assert.equal(
      (await db.selectFrom('workspaces').select('id').where('account_id', '=', account.id).execute()).length,
      0,
    );
    assert.equal(
      (await db.selectFrom('account_api_keys').select('id').where('account_id', '=', account.id).execute()).length,
      0,
    );
    const trail = await auditOf(t.app, account.id);
    assert.equal(trail.length, before + 1);
    assert.ok(trail.some((e) => e.action === 'account.deleted'));
    const hard = await lastAudit(t.app, account.id, 'account.hard_deleted');
    assert.equal(hard.metadata.purgedMembers, 3);
    assert.equal(hard.metadata.purgedWorkspaces, 2);
    // its slug is free again, and the job is idempotent
    assert.equal(
      (
        await call(
          t,
          'POST',
          'accounts',
          { authorization: `Bearer ${(await t.app.services.identity.sessions.start(owner.user.id)).accessToken}` },
          { slug: account.slug, legalName: 'Reborn' },
        )
      ).status,
      201,
    );
    assert.deepEqual(await purgeJob().run(clock.now()), []);
    await assert.rejects(t.app.services.accounts.deletion.restore(OPERATOR, account.id), { status: 409 });
  });

  it('deletion_approved: only from closed, no restore, purged on the next run regardless of retention', async () => {
    const { owner, account } = await makeTeam(t.app);
    await assert.rejects(t.app.services.accounts.deletion.approve(OPERATOR, account.id), { status: 409 });
    await call(t, 'DELETE', `accounts/${account.id}`, owner.headers);
    await t.app.services.accounts.deletion.approve(OPERATOR, account.id);
    assert.equal((await row(account.id)).status, 'deletion_approved');
    assert.ok(await lastAudit(t.app, account.id, 'account.deletion_approved'));
    await assert.rejects(t.app.services.accounts.deletion.restore(OPERATOR, account.id), { status: 409 });
    assert.deepEqual(await purgeJob().run(clock.now()), [account.id]);
    assert.equal((await row(account.id)).status, 'hard_deleted');
    await assert.rejects(t.app.services.accounts.update(OPERATOR, account.id, { status: 'active' }), { status: 404 });
  });

  it('GET /accounts/:id/logs: newest first, cursor pages, meta total/hasMore/cursor, forged cursor 400', async () => {
    const { owner, account, members } = await makeTeam(t.app, ['admin', 'member']);
    for (let i = 0; i < 45; i++) {
      await t.app.services.audit.record(
        t.app.kernel.db,
        { userId: owner.user.id },
        {
          accountId: account.id,
          action: 'account.updated',
          targetId: account.id,
          metadata: { field: 'industry', oldValue: String(i), newValue: String(i + 1) },
        },
      );
    }
    const total = (await auditOf(t.app, account.id)).length;
    const first = await call(t, 'GET', `accounts/${account.id}/logs`, members.admin.headers);
    assert.equal(first.status, 200);
    assert.equal(first.body.data.length, 20);
    assert.equal(first.body.meta.total, total);
    assert.equal(first.body.meta.hasMore, true);
    assert.equal(typeof first.body.meta.cursor, 'string');
    assert.deepEqual(first.body.data[0].metadata, { field: 'industry', oldValue: '44', newValue: '45' });
    assert.deepEqual(Object.keys(first.body.data[0]).sort(), [
      'action',
      'actorId',
      'actorUsername',
      'createdAt',
      'id',
      'metadata',
      'targetId',
    ]);
    const seen = new Set<string>(first.body.data.map((e: { id: string }) => e.id));
    let cursor = first.body.meta.cursor;
    let pages = 1;
    while (cursor) {
      const page = await call(
        t,
        'GET',
        `accounts/${account.id}/logs?limit=20&cursor=${encodeURIComponent(cursor)}`,
        owner.headers,
      );
      assert.equal(page.status, 200);
      for (const e of page.body.data) seen.add(e.id);
      cursor = page.body.meta.cursor;
      assert.equal(page.body.meta.hasMore, cursor !== null);
      pages++;
    }
    assert.equal(seen.size, total);
    assert.equal(pages, Math.ceil(total / 20));
    const oldest = await call(t, 'GET', `accounts/${account.id}/logs?limit=100`, owner.headers);
    assert.equal(oldest.body.data.at(-1).action, 'account.created');
    assert.equal(oldest.body.meta.hasMore, false);
    assert.equal(oldest.body.meta.cursor, null);
    assert.equal((await call(t, 'GET', `accounts/${account.id}/logs?cursor=forged.cursor`, owner.headers)).status, 400);
    // a cursor of another account's log is refused
    const other = await makeTeam(t.app);
    const foreign = await call(
      t,
      'GET',
      `accounts/${other.account.id}/logs?cursor=${encodeURIComponent(first.body.meta.cursor)}`,
      other.owner.headers,
    );
    assert.equal(foreign.status, 400);
    assert.equal((await call(t, 'GET', `accounts/${account.id}/logs?limit=101`, owner.headers)).status, 400);
    assert.equal((await call(t, 'GET', `accounts/${account.id}/logs?limit=0`, owner.headers)).status, 400);
    assert.equal((await call(t, 'GET', `accounts/${account.id}/logs`, members.member.headers)).status, 403);
  });

  it('the log query uses the (account_id, seq) index', async () => {
    if (TEST_ENGINE === 'sqlite') {
      const plan = rawSqlite(t.app.kernel)
        .prepare(
          'EXPLAIN QUERY PLAN SELECT seq FROM account_audit_log WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT 21',
        )
        .all('x', 100) as Array<{
        detail: string;
      }>;
      const text = plan.map((p) => p.detail).join('\n');
      assert.match(text, /account_audit_log_account_seq/);
      assert.doesNotMatch(text, /TEMP B-TREE/);
      return;
    }
    // PostgreSQL: the planner prefers a sequential scan of a tiny table; forbidding it in this
    // session shows whether the index can serve the query, in order, without a sort.
    const text = await t.app.kernel.db.connection().execute(async (conn) => {
      await sql`set enable_seqscan = off`.execute(conn);
      try {
        const plan = await sql<{ 'QUERY PLAN': string }>`explain select seq from account_audit_log
          where account_id = ${'x'} and seq < ${100} order by seq desc limit 21`.execute(conn);
        return plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await sql`reset enable_seqscan`.execute(conn);
      }
    });
    assert.match(text, /Index (Only )?Scan Backward using account_audit_log_account_seq/);
    assert.doesNotMatch(text, /Sort/);
  });
});
