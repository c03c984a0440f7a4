import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';

describe('the built binary', () => {
  let g: RunningGantry;
  before(async () => (g = await spawnGantry()));
  after(() => g.stop());

  it('serves, accepts a CLI-created user at sign-in, and stops on SIGTERM', async () => {
    const created = await g.cli([
      'user',
      'create',
      '--email',
      'e2e@example.test',
      '--password',
      'long enough pw',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const login = await fetch(`${g.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'e2e@example.test', password: 'long enough pw' }),
    });
    assert.equal(login.status, 200);
    const { data } = (await login.json()) as { data: { accessToken: string } };
    const me = await fetch(`${g.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${data.accessToken}` } });
    assert.equal(((await me.json()) as { data: { email: string } }).data.email, 'e2e@example.test');
    assert.equal(await g.stop(), 0);
  });
});
