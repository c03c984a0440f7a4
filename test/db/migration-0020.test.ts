import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrator.js';
import { migrations } from '../../migrations/index.js';

/**
 * Migration 0020 on an installation that already has rows (docs/postgres.md, Schema):
 * duplicate workspace names stop it with their names, duplicate pending invitations keep the
 * newest, and memberships keep SQLite's rowid order.
 */
describe('migration 0020 over existing rows', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(tmpdir(), 'gantry-0020-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses duplicate names, supersedes older pending invitations, numbers memberships by rowid', async () => {
    const handle = openDatabase(path.join(dir, 'upgrade.db'));
    const { db, sqlite } = handle;
    try {
      const before0020 = migrations.filter((m) => m.id < '0020');
      const through0020 = migrations.filter((m) => m.id < '0021');
      await migrate(db, before0020);
      // Rows only: the parents these reference do not matter to this migration.
      sqlite.pragma('foreign_keys = off');
      const at = '2026-01-01T00:00:00.000Z';
      const workspace = sqlite.prepare(
        `insert into workspaces (id, account_id, name, is_default, created_at, updated_at) values (?, 'a1', ?, 0, ?, ?)`,
      );
      workspace.run('w1', 'Ops', at, at);
      workspace.run('w2', 'OPS', at, at);
      workspace.run('w3', 'Ops', at, at);
      sqlite.prepare(`insert into workspaces values ('w4', 'a2', 'Ops', 0, ?, ?)`).run(at, at);
      const invite = sqlite.prepare(
        `insert into account_invitations (id, account_id, email, role, status, invited_by, token_id, created_at, expires_at)
         values (?, 'a1', ?, 'viewer', ?, 'system', ?, ?, ?)`,
      );
      invite.run('i1', 'x@example.test', 'pending', 't1', '2026-01-01T00:00:00.000Z', at);
      invite.run('i2', 'x@example.test', 'pending', 't2', '2026-01-03T00:00:00.000Z', at);
      invite.run('i3', 'x@example.test', 'pending', 't3', '2026-01-02T00:00:00.000Z', at);
      invite.run('i4', 'y@example.test', 'pending', 't4', at, at);
      const member = sqlite.prepare(
        `insert into account_members (account_id, user_id, role, status, created_at) values (?, ?, 'owner', 'active', ?)`,
      );
      for (const account of ['m-c', 'm-a', 'm-b']) member.run(account, 'u1', at);

      await assert.rejects(
        migrate(db, through0020),
        (err: Error) => /rename one of each/.test(err.message) && /account a1: "ops"/.test(err.message),
      );
      // Nothing of the failed migration stays behind.
      assert.equal(
        sqlite.prepare(`select count(*) from account_invitations where status = 'revoked'`).pluck().get(),
        0,
      );

      sqlite.prepare(`update workspaces set name = ? where id = ?`).run('Ops 2', 'w2');
      sqlite.prepare(`update workspaces set name = ? where id = ?`).run('Ops 3', 'w3');
      assert.deepEqual((await migrate(db, through0020)).applied, ['0020_uniqueness_and_member_order']);

      const invitations = sqlite.prepare(`select id, status from account_invitations order by id`).all();
      assert.deepEqual(invitations, [
        { id: 'i1', status: 'revoked' },
        { id: 'i2', status: 'pending' },
        { id: 'i3', status: 'revoked' },
        { id: 'i4', status: 'pending' },
      ]);
      member.run('m-0', 'u1', at);
      const order = sqlite
        .prepare(`select account_id, seq, rowid as r from account_members order by seq`)
        .all() as Array<{ account_id: string; seq: number; r: number }>;
      assert.deepEqual(
        order.map((m) => m.account_id),
        ['m-c', 'm-a', 'm-b', 'm-0'],
      );
      for (const m of order) assert.equal(m.seq, m.r);
      assert.throws(() => workspace.run('w5', 'ops 2', at, at), /UNIQUE/);
    } finally {
      await handle.close();
    }
  });
});
