import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { AI_ENV, aiMember, configure } from '../helpers/ai.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-ai.js';
import { makeTeam, sealUnderLostKey } from '../helpers/factories.js';
import { startModernMcpServer, type McpFake } from '../helpers/mcp-servers.js';

const RUNS = '/api/v1/features/chat/runs';

/**
 * A node a key rotation did not reach (docs/postgres.md, Secrets): a value sealed with a key
 * id its keyring lacks is the operator's to fix, answered 503 NOT_CONFIGURED naming the key,
 * and reported once in the log; never a 500.
 */
describe('a value sealed with a credential key this node lacks', () => {
  let t: TestApp;
  let fake: FakeProvider;
  let mcp: McpFake;
  const lostKey = randomBytes(32);
  /** Runs `seal` with the key `x9` active, as a node that has it; afterwards this node lacks it. */
  const underLostKey = (seal: () => Promise<unknown>) => sealUnderLostKey(t.app, 'x9', lostKey, seal);

  before(async () => {
    t = await createTestApp({ env: AI_ENV });
    fake = await startFakeProvider('openai');
    mcp = await startModernMcpServer({
      tools: [{ name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: {} } }],
    });
    // The provider's key is sealed under `x9`, a key another node made; then this node is one without it.
    await underLostKey(() => configure(t.app, fake));
  });
  after(async () => {
    await t?.close();
    await fake?.close();
    await mcp?.close();
  });

  it('answers 503 NOT_CONFIGURED saying which key and what to do, changes nothing, logs it once', async () => {
    const row = await t.app.kernel.db
      .selectFrom('ai_providers')
      .select('key_id')
      .where('name', '=', 'openai')
      .executeTakeFirstOrThrow();
    assert.equal(row.key_id, 'x9');
    const m = await aiMember(t.app);
    const before = (await t.app.services.wallet.get(m.user.id)).balance;

    for (let i = 0; i < 2; i++) {
      const res = await t.inject({
        method: 'POST',
        url: RUNS,
        headers: m.headers,
        payload: { messages: [{ role: 'user', content: 'hello' }] },
      });
      assert.equal(res.statusCode, 503, res.payload);
      const error = (res.result as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'NOT_CONFIGURED');
      assert.match(error.message, /Credential key "x9" is not in this server's keyring/);
      assert.match(error.message, /GANTRY_SECRET_CREDENTIAL_KEY/);
      assert.match(error.message, /secrets\.json/);
    }

    assert.equal(fake.chats().length, 0);
    assert.equal((await t.app.services.wallet.get(m.user.id)).balance, before);
    const runs = await t.app.kernel.db.selectFrom('ai_runs').select('id').where('user_id', '=', m.user.id).execute();
    assert.equal(runs.length, 0);

    const reports = t.logs.filter((line) => line.includes('credential key missing'));
    assert.equal(reports.length, 1, reports.join('\n'));
    const report = JSON.parse(reports[0]) as { level: string; keyId: string };
    assert.equal(report.level, 'error');
    assert.equal(report.keyId, 'x9');
    // No 500 logged for these requests, and no key material anywhere in the log.
    assert.equal(t.logs.filter((line) => line.includes('request failed')).length, 0);
    const text = t.logs.join('\n');
    assert.equal(text.includes(fake.apiKey), false);
    assert.equal(text.includes(lostKey.toString('base64')), false);
  });

  it('answers the same for a connector credential: syncing and invoking tools', async () => {
    const { owner } = await makeTeam(t.app);
    const h = owner.headers;
    const C = '/api/v1/connectors';
    const inst = (
      await t.inject({
        method: 'POST',
        url: `${C}/instances`,
        headers: h,
        payload: { connectorKey: 'mcp-generic', displayName: 'MCP', config: { url: mcp.url } },
      })
    ).result as { data: { id: string } };
    const id = inst.data.id;
    const synced = await t.inject({ method: 'POST', url: `${C}/instances/${id}/sync-tools`, headers: h });
    assert.equal(synced.statusCode, 200, synced.payload);
    const tool = (synced.result as { data: Array<{ id: string }> }).data[0];
    await underLostKey(async () => {
      const set = await t.inject({
        method: 'POST',
        url: `${C}/instances/${id}/credentials`,
        headers: h,
        payload: { credType: 'bearer_token', credentials: { token: 'tkn-lost' } },
      });
      assert.ok(set.statusCode < 300, set.payload);
    });
    const calls = mcp.calls.length;
    for (const res of [
      await t.inject({ method: 'POST', url: `${C}/instances/${id}/sync-tools`, headers: h }),
      await t.inject({
        method: 'POST',
        url: `${C}/instances/${id}/tools/${tool.id}/invoke`,
        headers: h,
        payload: { input: {} },
      }),
    ]) {
      assert.equal(res.statusCode, 503, res.payload);
      const error = (res.result as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'NOT_CONFIGURED');
      assert.match(error.message, /Credential key "x9"/);
    }
    assert.equal(mcp.calls.length, calls);
    // Reported once for the process, the AI case above included.
    assert.equal(t.logs.filter((line) => line.includes('credential key missing')).length, 1);
  });
});
