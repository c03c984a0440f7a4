import { sql } from 'kysely';
import { engineOf } from '../src/db/engine.js';
import type { Migration } from './types.js';

/**
 * Rules the services checked by reading first now also hold in the schema, so a race between
 * two connections of a PostgreSQL pool ends in a unique violation (409) instead of a duplicate;
 * and memberships get an explicit insertion order (docs/postgres.md, Schema).
 */
export const migration: Migration = {
  id: '0020_uniqueness_and_member_order',
  async up(db) {
    // Workspace names are unique per account, case-insensitively (docs/accounts.md). Duplicates
    // come from that race, or from names differing in the case of ASCII letters next to
    // non-ASCII ones (SQL's lower() folds ASCII only; the check folded the new name in full).
    // Which one to rename is the owner's choice, not ours: the migration stops and names them.
    const duplicates = await db
      .selectFrom('workspaces')
      .select(['account_id', sql<string>`lower(name)`.as('name')])
      .groupBy(['account_id', sql`lower(name)`])
      .having(sql`count(*)`, '>', 1)
      .execute();
    if (duplicates.length > 0) {
      const list = duplicates.map((d) => `account ${d.account_id}: "${d.name}"`).join(', ');
      throw new Error(`Workspace names must be unique per account; rename one of each before upgrading (${list})`);
    }
    await db.schema
      .createIndex('workspaces_account_name')
      .unique()
      .on('workspaces')
      .column('account_id')
      .expression(sql`lower(name)`)
      .execute();

    // One pending invitation per email and account: the service supersedes an older pending
    // one when it invites again, so the migration does the same to any duplicate and keeps the
    // newest (ties: the larger id).
    const pending = await db
      .selectFrom('account_invitations')
      .select(['id', 'account_id', 'email'])
      .where('status', '=', 'pending')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const kept = new Set<string>();
    const superseded: string[] = [];
    for (const row of pending) {
      const key = `${row.account_id}\n${row.email}`;
      if (kept.has(key)) superseded.push(row.id);
      else kept.add(key);
    }
    if (superseded.length > 0)
      await db
        .updateTable('account_invitations')
        .set({ status: 'revoked', revoked_at: new Date().toISOString() })
        .where('id', 'in', superseded)
        .execute();
    await db.schema
      .createIndex('account_invitations_pending_email')
      .unique()
      .on('account_invitations')
      .columns(['account_id', 'email'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();

    // Memberships in insertion order, for ties of created_at. SQLite: the rowid, which decided
    // until now, copied into the column and by a trigger for every new row. PostgreSQL: an
    // identity, which numbers the existing rows in table order.
    if (engineOf(db) === 'postgres') {
      await db.schema
        .alterTable('account_members')
        .addColumn('seq', 'bigint', (c) => c.generatedByDefaultAsIdentity())
        .execute();
    } else {
      await db.schema.alterTable('account_members').addColumn('seq', 'integer').execute();
      await sql`update account_members set seq = rowid`.execute(db);
      await sql`create trigger account_members_seq after insert on account_members for each row
        when new.seq is null begin
          update account_members set seq = new.rowid where rowid = new.rowid;
        end`.execute(db);
    }
  },
};
