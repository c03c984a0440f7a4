import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { AI_ENV, aiMember, configure } from '../helpers/ai.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-ai.js';

const RUNS = '/api/v1/features/chat/runs';

/**
 * A node a key rotation did not reach (docs/postgres.md, Secrets): a value sealed with a key
 * id its keyring lacks is the operator's to fix, answered 503 NOT_CONFIGURED naming the key,
 * and reported once in the log; never a 500.
 */
describe('a value sealed with a credential key this node lacks', () => {
  let t: TestApp;
  let fake: FakeProvider;
  const lostKey = randomBytes(32);

  before(async () => {
    t = await createTestApp({ env: AI_ENV });
    fake = await startFakeProvider('openai');
    // The provider's key is sealed under `x9`, a key another node made; then this node is one without it.
    const { secrets } = t.app.kernel;
    const active = secrets.activeCredentialKeyId;
    secrets.credentialKeys.set('x9', lostKey);
    secrets.activeCredentialKeyId = 'x9';
    await configure(t.app, fake);
    secrets.activeCredentialKeyId = active;
    secrets.credentialKeys.delete('x9');
  });
  after(async () => {
    await t?.close();
    await fake?.close();
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
});
