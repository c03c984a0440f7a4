import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startCluster, type TestCluster } from '../helpers/cluster.js';

/** docs/scaling.md, Deploying: nodes on PostgreSQL check the schema; `gantry migrate` changes it. */
describe('gantry migrate is the deploy step on PostgreSQL', () => {
  let cluster: TestCluster;
  before(async () => (cluster = await startCluster(0)));
  after(() => cluster.stop());

  const sql = async (statements: string[]) => {
    const client = new pg.Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
  };

  it('a node on a database missing a migration refuses, naming gantry migrate; after it, the node starts', async () => {
    await sql([
      "delete from schema_migrations where id = '0021_cluster_jobs'",
      'drop table job_ticks',
      'alter table mail_outbox drop column claimed_until',
    ]);
    await assert.rejects(cluster.addNode(), /missing migrations \(0021_cluster_jobs\); run `gantry migrate` first/);
    const migrated = await cluster.cli(['migrate']);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /applied 0021_cluster_jobs/);
    const node = await cluster.addNode();
    assert.equal((await fetch(`${node.url}/readyz`)).status, 200);
  });

  it('a node on a database migrated by a newer gantry refuses unless GANTRY_ALLOW_NEWER_SCHEMA is set', async () => {
    await sql(["insert into schema_migrations (id, applied_at) values ('9999_future', '2026-01-01T00:00:00.000Z')"]);
    await assert.rejects(
      cluster.addNode(),
      /newer gantry \(unknown migrations: 9999_future\).*GANTRY_ALLOW_NEWER_SCHEMA=1/,
    );
    const node = await cluster.addNode({ GANTRY_ALLOW_NEWER_SCHEMA: '1' });
    assert.equal((await fetch(`${node.url}/readyz`)).status, 200);
  });
});
