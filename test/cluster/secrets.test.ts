import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { providerSetArgs, startFakeProvider, type FakeProvider } from '../helpers/fake-ai.js';
import { runBin } from '../helpers/spawn.js';
import { TEST_ENV } from '../helpers/app.js';

/**
 * Keys on several nodes (docs/postgres.md, Secrets): every node is given the same keys, none
 * makes its own, and `gantry secrets rotate` reaches every node through the database keyring.
 */
describe('secrets on two nodes', () => {
  let cluster: TestCluster;
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeProvider('anthropic');
    cluster = await startCluster(2, { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  after(async () => {
    await cluster?.stop();
    await fake?.close();
  });

  const cli = async (args: string[]) => {
    const res = await cluster.cli(args);
    assert.equal(res.code, 0, `gantry ${args.join(' ')}: ${res.stderr}`);
    return res.stdout;
  };

  /** The provider's key as stored: which credential key sealed it. */
  const providerKeyId = async () => {
    const client = new pg.Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query("select api_key_sealed from ai_providers where name = 'anthropic'");
      return String(rows[0].api_key_sealed).split('.')[1];
    } finally {
      await client.end();
    }
  };

  it('a rotation by the CLI reaches both nodes: each opens values sealed under the new key', async () => {
    const userId = (
      JSON.parse(
        await cli(['user', 'create', '--email', 'keys@example.test', '--password', 'long enough pw', '--json']),
      ) as { id: string }
    ).id;
    const api = async (node: number, method: string, route: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${cluster.nodes[node].url}/api/v1/${route}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as { data: any; error: { code: string } | null } };
    };
    const login = await api(0, 'POST', 'auth/login', null, { email: 'keys@example.test', password: 'long enough pw' });
    assert.equal(login.status, 200);
    const token = login.body.data.accessToken as string;
    const account = await api(1, 'POST', 'accounts', token, { slug: 'two-keys', legalName: 'Two Keys Ltd' });
    assert.equal(account.status, 201, JSON.stringify(account.body.error));
    await cli(['account', 'entitle', account.body.data.id, '--feature', 'ai']);
    await cli(['wallet', 'credit', userId, '5']);
    const setProvider = () => cli(providerSetArgs(fake, 'claude-e2e'));
    /** A run on the node succeeds within a few seconds: it opened the provider's key. */
    const runsOn = async (node: number) => {
      let last = '';
      for (let i = 0; i < 40; i++) {
        const res = await api(node, 'POST', 'features/chat/runs', token, {
          messages: [{ role: 'user', content: 'hi' }],
        });
        if (res.status === 201) return;
        last = `${res.status} ${JSON.stringify(res.body.error)}`;
        await new Promise((r) => setTimeout(r, 150));
      }
      assert.fail(`no run on node ${node}: ${last}`);
    };

    await setProvider();
    assert.equal(await providerKeyId(), 'env');
    await runsOn(0);
    await runsOn(1);

    const rotated = JSON.parse(await cli(['secrets', 'rotate', '--settle-ms', '1500', '--yes', '--json'])) as {
      activeKeyId: string;
      resealed: Record<string, number>;
    };
    assert.equal(rotated.activeKeyId, 'c2');
    assert.equal(rotated.resealed['ai_providers.api_key_sealed'], 1);
    assert.equal(await providerKeyId(), 'c2');

    // A new key value, sealed by the CLI under c2: each node must open it with the key it learnt.
    fake.apiKey = `sk-test-anthropic-${randomBytes(8).toString('hex')}`;
    await setProvider();
    assert.equal(await providerKeyId(), 'c2');
    await runsOn(0);
    await runsOn(1);

    // A node started now reads the keyring at start, and a second rotation makes c3.
    const third = await cluster.addNode();
    assert.ok(third.url);
    const again = JSON.parse(await cli(['secrets', 'rotate', '--settle-ms', '1500', '--yes', '--json'])) as {
      activeKeyId: string;
    };
    assert.equal(again.activeKeyId, 'c3');
    await runsOn(2);
  });

  it('a node without the shared keys, or with another credential key, refuses to start and says why in one line', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-nokeys-'));
    try {
      const base = { ...TEST_ENV, GANTRY_DATABASE_URL: cluster.databaseUrl, GANTRY_PORT: '0' };
      const bare = await runBin(['serve', '--data-dir', dataDir], base);
      assert.notEqual(bare.code, 0);
      assert.match(
        bare.stderr,
        /GANTRY_SECRET_JWT_KEY, GANTRY_SECRET_CURSOR_KEY, GANTRY_SECRET_CREDENTIAL_KEY .*docs\/postgres\.md/,
      );
      assert.equal(bare.stderr.trim().split('\n').length, 1, bare.stderr);
      // It made no keys of its own.
      assert.equal(existsSync(path.join(dataDir, 'secrets.json')), false);

      const wrong = await runBin(['serve', '--data-dir', dataDir], {
        ...base,
        GANTRY_SECRET_JWT_KEY: cluster.env.GANTRY_SECRET_JWT_KEY,
        GANTRY_SECRET_CURSOR_KEY: cluster.env.GANTRY_SECRET_CURSOR_KEY,
        GANTRY_SECRET_CREDENTIAL_KEY: randomBytes(32).toString('base64'),
      });
      assert.notEqual(wrong.code, 0);
      assert.match(wrong.stderr, /GANTRY_SECRET_CREDENTIAL_KEY does not open the credential keyring/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
