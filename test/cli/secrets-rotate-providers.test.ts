import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { credentialKeyId } from '../helpers/postgres.js';
import { sealedKeyId } from '../../src/lib/sealed.js';

describe('gantry secrets rotate and AI provider keys', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    // A running server watches the change feed; on PostgreSQL that is what delivers the new key.
    await t.app.kernel.changes.start(60_000);
  });
  after(() => t.close());

  it('re-seals provider keys under the new key, and the running app still opens them', async () => {
    await t.app.services.ai.admin.set({
      name: 'anthropic',
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'sk-ant-rotate-me-0001',
      models: ['claude-test'],
      priority: 1,
    });
    const before = await t.app.kernel.db
      .selectFrom('ai_providers')
      .select(['api_key_sealed', 'key_id'])
      .where('name', '=', 'anthropic')
      .executeTakeFirstOrThrow();
    assert.equal(sealedKeyId(before.api_key_sealed), credentialKeyId(1));
    const res = await cli(['secrets', 'rotate', '--settle-ms', '0', '--yes', '--json'], { dataDir: t.dataDir });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json<{ resealed: Record<string, number> }>().resealed['ai_providers.api_key_sealed'], 1);
    const after = await t.app.kernel.db
      .selectFrom('ai_providers')
      .select(['api_key_sealed', 'key_id'])
      .where('name', '=', 'anthropic')
      .executeTakeFirstOrThrow();
    assert.equal(sealedKeyId(after.api_key_sealed), credentialKeyId(2));
    assert.equal(after.key_id, credentialKeyId(2));
    // The running app learns the new key through the change feed, then opens the re-sealed value.
    await t.app.kernel.changes.poll();
    const [provider] = await t.app.services.ai.admin.configured();
    assert.equal(provider.apiKey, 'sk-ant-rotate-me-0001');
  });
});
