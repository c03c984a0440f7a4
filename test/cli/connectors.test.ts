import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { makeTeam } from '../helpers/factories.js';
import { credentialKeyId, credentialKeyring, TEST_ENGINE } from '../helpers/postgres.js';
import { sealedKeyId } from '../../src/lib/sealed.js';
import { openCredentials } from '../../src/connectors/credentials.js';

type App = ReturnType<typeof withJson>;

describe('gantry connector and gantry secrets rotate', () => {
  let t: App;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    await t.app.kernel.changes.start(60_000);
  });
  after(async () => t.close());

  it('defines a system OAuth connector and lists it; missing flags exit 2 naming them', async () => {
    const schemaFile = path.join(t.dataDir, 'schema.json');
    writeFileSync(schemaFile, JSON.stringify({ type: 'object', properties: { org: { type: 'string' } } }));
    const res = await cli(
      [
        'connector',
        'define',
        '--key',
        'acme',
        '--name',
        'Acme',
        '--auth',
        'oauth2',
        '--authorize-url',
        'https://id.acme.test/authorize',
        '--token-url',
        'https://id.acme.test/token',
        '--client-id',
        'cid',
        '--client-secret',
        'acme-client-secret-xyz',
        '--scope',
        'read',
        'write',
        '--pkce',
        '--check-url',
        'https://api.acme.test/me',
        '--config-schema',
        schemaFile,
        '--json',
      ],
      { dataDir: t.dataDir },
    );
    assert.equal(res.code, 0, res.stderr);
    const def = res.json<{
      key: string;
      isSystem: boolean;
      oauth: { scopes: string[]; pkce: boolean; configured: boolean };
    }>();
    assert.equal(def.key, 'acme');
    assert.equal(def.isSystem, true);
    assert.deepEqual(def.oauth.scopes, ['read', 'write']);
    assert.equal(def.oauth.pkce, true);
    assert.equal(def.oauth.configured, true);
    assert.ok(!res.stdout.includes('acme-client-secret-xyz'));
    const list = await cli(['connector', 'list', '--json'], { dataDir: t.dataDir });
    assert.ok(list.json<Array<{ key: string }>>().some((d) => d.key === 'acme'));
    const again = await cli(
      [
        'connector',
        'define',
        '--key',
        'acme',
        '--name',
        'Acme',
        '--auth',
        'oauth2',
        '--authorize-url',
        'https://a.test/a',
        '--token-url',
        'https://a.test/t',
        '--client-id',
        'c',
        '--client-secret',
        's',
        '--json',
      ],
      { dataDir: t.dataDir },
    );
    assert.equal(again.code, 2);
    const missing = await cli(
      [
        'connector',
        'define',
        '--key',
        'beta',
        '--name',
        'Beta',
        '--auth',
        'oauth2',
        '--authorize-url',
        'https://a.test/a',
        '--client-id',
        'c',
        '--client-secret',
        's',
      ],
      { dataDir: t.dataDir },
    );
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--token-url/);
    // The running server sees it: an instance of it can be created.
    const { owner } = await makeTeam(t.app);
    const inst = await t.inject({
      method: 'POST',
      url: '/api/v1/connectors/instances',
      headers: owner.headers,
      payload: { connectorKey: 'acme', displayName: 'Acme', config: { org: 'x' } },
    });
    assert.equal(inst.statusCode, 201);
  });

  it('re-encrypts every sealed credential under a new key while the server runs', async () => {
    const { owner } = await makeTeam(t.app);
    const inst = (
      await t.inject({
        method: 'POST',
        url: '/api/v1/connectors/instances',
        headers: owner.headers,
        payload: { connectorKey: 'mcp-generic', displayName: 'M', config: { url: 'http://127.0.0.1:9/mcp' } },
      })
    ).json().data;
    await t.inject({
      method: 'POST',
      url: `/api/v1/connectors/instances/${inst.id}/credentials`,
      headers: owner.headers,
      payload: { credType: 'api_key', credentials: { apiKey: 'rotate-me-123' } },
    });
    const before = await t.app.kernel.db
      .selectFrom('connector_credentials')
      .selectAll()
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    const [first, second] = [credentialKeyId(1), credentialKeyId(2)];
    assert.deepEqual(await credentialKeyring(t.dataDir), { ids: [first], active: first });
    assert.equal(sealedKeyId(before.sealed_value), first);
    const res = await cli(['secrets', 'rotate', '--settle-ms', '0', '--yes', '--json'], { dataDir: t.dataDir });
    assert.equal(res.code, 0, res.stderr);
    const out = res.json<{ activeKeyId: string; total: number }>();
    assert.equal(out.activeKeyId, second);
    assert.ok(out.total >= 2);
    assert.deepEqual(await credentialKeyring(t.dataDir), { ids: [first, second], active: second });
    const after1 = await t.app.kernel.db
      .selectFrom('connector_credentials')
      .selectAll()
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    assert.equal(sealedKeyId(after1.sealed_value), second);
    const defs = await t.app.kernel.db
      .selectFrom('connector_definitions')
      .select('client_secret_sealed')
      .where('key', '=', 'acme')
      .executeTakeFirstOrThrow();
    assert.equal(sealedKeyId(defs.client_secret_sealed!), second);
    // The running server reloads the keyring from the change feed, opens the new values and seals new ones under the new key.
    // On SQLite it hears of it at the next poll; PostgreSQL pushes the notification as it commits.
    if (TEST_ENGINE === 'sqlite') assert.equal(t.app.kernel.secrets.credentialKeys.has(second), false);
    await t.app.kernel.changes.poll();
    assert.equal(t.app.kernel.secrets.activeCredentialKeyId, second);
    assert.equal(
      openCredentials(t.app.kernel.secrets, inst.id, 'api_key', after1.sealed_value, after1.origin).apiKey,
      'rotate-me-123',
    );
    const status = await t.inject({
      method: 'GET',
      url: `/api/v1/connectors/instances/${inst.id}/credentials/status`,
      headers: owner.headers,
    });
    assert.equal(status.json().data.configured, true);
    await t.inject({
      method: 'POST',
      url: `/api/v1/connectors/instances/${inst.id}/credentials`,
      headers: owner.headers,
      payload: { credType: 'api_key', credentials: { apiKey: 'after-rotation' } },
    });
    const newer = await t.app.kernel.db
      .selectFrom('connector_credentials')
      .selectAll()
      .where('instance_id', '=', inst.id)
      .executeTakeFirstOrThrow();
    assert.equal(sealedKeyId(newer.sealed_value), second);
  });
});
