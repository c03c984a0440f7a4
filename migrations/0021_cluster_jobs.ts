import type { Migration } from './types.js';

export const migration: Migration = {
  id: '0021_cluster_jobs',
  async up(db) {
    // docs/scaling.md, Periodic jobs: the last tick of each cluster job some node claimed. A
    // node runs a tick only if its conditional upsert moved `tick` forward, so of several nodes
    // one runs it.
    await db.schema
      .createTable('job_ticks')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('tick', 'text', (c) => c.notNull())
      .addColumn('claimed_at', 'text', (c) => c.notNull())
      .execute();
    // A lease on an outbox mail while one process sends it: no other process claims it until
    // the lease runs out, so a slow SMTP send is never sent twice (docs/scaling.md, Mail).
    await db.schema.alterTable('mail_outbox').addColumn('claimed_until', 'text').execute();
  },
};
