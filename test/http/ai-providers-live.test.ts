import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { AI_ENV, aiMember, userSays } from '../helpers/ai.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-ai.js';

type Body = { data: any; error: { code: string } | null };

describe('provider changes made by the CLI reach a running server', () => {
  let dataDir: string;
  let t: TestApp;
  let fake: FakeProvider;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-ai-live-'));
    t = await createTestApp({ dataDir, env: AI_ENV });
    await t.app.kernel.changes.start(60_000); // polled by hand below
    fake = await startFakeProvider('google');
  });
  after(async () => {
    await t.close();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('set, key change and remove are seen through the change feed', async () => {
    const m = await aiMember(t.app);
    const run = () =>
      t.inject({ method: 'POST', url: '/api/v1/features/chat/runs', headers: m.headers, payload: userSays('hello') });
    assert.equal((await run()).statusCode, 503, 'nothing configured yet (and the empty list is cached)');

    const set = await cli(
      ['provider', 'set', 'google', '--base-url', fake.url, '--api-key', fake.apiKey, '--model', 'gemini-test'],
      { dataDir, env: AI_ENV },
    );
    assert.equal(set.code, 0, set.stderr);
    await t.app.kernel.changes.poll();
    const ok = await run();
    assert.equal(ok.statusCode, 201);
    assert.equal((ok.result as Body).data.provider, 'google');
    assert.equal(fake.chats().at(-1)!.headers['x-goog-api-key'], fake.apiKey);

    // A wrong key breaks calls (auth failures count against the circuit)...
    assert.equal(
      (
        await cli(['provider', 'set', 'google', '--base-url', fake.url, '--api-key', 'wrong-key-000000'], {
          dataDir,
          env: AI_ENV,
        })
      ).code,
      0,
    );
    await t.app.kernel.changes.poll();
    const refused = await run();
    assert.equal(refused.statusCode, 502);
    assert.equal((refused.result as Body).data, null);
    await run();
    const health = (await t.inject({ url: '/api/v1/ai/operations/models/health', headers: m.headers })).result as Body;
    assert.equal(health.data[2].circuitState, 'open');
    // ...and fixing it resets the circuit at once.
    assert.equal(
      (
        await cli(['provider', 'set', 'google', '--base-url', fake.url, '--api-key', fake.apiKey], {
          dataDir,
          env: AI_ENV,
        })
      ).code,
      0,
    );
    await t.app.kernel.changes.poll();
    assert.equal((await run()).statusCode, 201);

    assert.equal((await cli(['provider', 'remove', 'google', '--yes'], { dataDir, env: AI_ENV })).code, 0);
    await t.app.kernel.changes.poll();
    assert.equal((await run()).statusCode, 503);
  });
});
