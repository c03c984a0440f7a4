import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';
import { providerSetArgs, startFakeProvider, type FakeProvider } from '../helpers/fake-ai.js';
import { TEST_ENV } from '../helpers/app.js';
import { testEnvFor } from '../helpers/postgres.js';
import { resolveConfig } from '../../src/config.js';
import { createAppContext } from '../../src/app.js';
import { createLogger } from '../../src/lib/logger.js';

describe('the built binary runs chats over a provider the CLI configures while it serves', () => {
  let g: RunningGantry;
  let fake: FakeProvider;
  let dataDir: string;
  let ids: { userId: string; accountId: string };
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-e2e-ai-'));
    // Accounts are created over HTTP by another domain; seed one directly in the data dir.
    const env = await testEnvFor(dataDir, { ...TEST_ENV, GANTRY_LOG_LEVEL: 'warn' });
    const app = await createAppContext(resolveConfig({ dataDir }, env), { logger: createLogger('warn'), env });
    const user = await app.services.identity.createUser({ email: 'e2e-ai@example.test', password: 'long enough pw' });
    const account = await app.services.accounts.create(user.id, { slug: 'e2e-ai', legalName: 'E2E AI Ltd' });
    await app.kernel.close();
    ids = { userId: user.id, accountId: account.id };
    fake = await startFakeProvider('anthropic');
    g = await spawnGantry({ dataDir, env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  });
  after(async () => {
    await g.stop();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('entitle, fund, configure by CLI; the server sees each within a second', async () => {
    const login = await fetch(`${g.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'e2e-ai@example.test', password: 'long enough pw' }),
    });
    const token = ((await login.json()) as { data: { accessToken: string } }).data.accessToken;
    const run = () =>
      fetch(`${g.url}/api/v1/features/chat/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      });
    const eventually = async (want: number) => {
      let last = 0;
      for (let i = 0; i < 20; i++) {
        const res = await run();
        last = res.status;
        if (last === want) return res;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.fail(`expected ${want}, last answer ${last}`);
    };

    assert.equal((await run()).status, 403);
    assert.equal((await g.cli(['account', 'entitle', ids.accountId, '--feature', 'ai'])).code, 0);
    await eventually(503);
    const set = await g.cli(providerSetArgs(fake, 'claude-e2e'));
    assert.equal(set.code, 0, set.stderr);
    await eventually(402);
    assert.equal((await g.cli(['wallet', 'credit', ids.userId, '5'])).code, 0);
    const ok = await eventually(201);
    const body = (await ok.json()) as {
      data: { provider: string; model: string; message: { content: string }; estimatedCostUsd: number };
    };
    assert.deepEqual(
      [body.data.provider, body.data.model, body.data.message.content, body.data.estimatedCostUsd],
      ['anthropic', 'claude-e2e', 'hello from anthropic', 0.000019],
    );

    // The same run streamed through the bundle: deltas, then the run record.
    const streamed = await fetch(`${g.url}/api/v1/features/chat/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    assert.equal(streamed.status, 200);
    assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
    const frames = (await streamed.text()).split('\n\n').filter(Boolean);
    const events = frames.map((f) => ({
      event: /^event: (.*)$/m.exec(f)?.[1],
      data: JSON.parse(/^data: (.*)$/m.exec(f)?.[1] ?? 'null'),
    }));
    assert.deepEqual(
      events.map((e) => e.event),
      ['start', 'delta', 'delta', 'delta', 'run'],
    );
    const last = events.at(-1)!.data as { status: string; message: { content: string }; estimatedCostUsd: number };
    assert.deepEqual(
      [last.status, last.message.content, last.estimatedCostUsd],
      ['succeeded', 'hello from anthropic', 0.000019],
    );
    const list = await g.cli(['provider', 'list', '--json']);
    assert.ok(!list.stdout.includes(fake.apiKey));
  });
});
