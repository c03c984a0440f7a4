import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGantry, type RunningGantry } from '../helpers/spawn.js';

describe('accounts through the built binary: CLI changes reach the running server', () => {
  let g: RunningGantry;
  before(async () => (g = await spawnGantry()));
  after(() => g.stop());

  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${g.url}/api/v1/${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as { data: any } };
  };
  const signIn = async (email: string) => {
    assert.equal(
      (await g.cli(['user', 'create', '--email', email, '--password', 'long enough pw', '--verified'])).code,
      0,
    );
    const res = await fetch(`${g.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'long enough pw' }),
    });
    return ((await res.json()) as { data: { accessToken: string; user: { id: string } } }).data;
  };

  it('suspend from the CLI, member removal ends the API key and the account for the session, invitation link in the outbox', async () => {
    const owner = await signIn('owner-e2e@example.test');
    const member = await signIn('member-e2e@example.test');
    const created = await api('POST', 'accounts', owner.accessToken, { slug: 'e2e-acme', legalName: 'E2E Acme' });
    assert.equal(created.status, 201);
    const accountId = created.body.data.id;

    assert.equal((await g.cli(['account', 'suspend', accountId, '--yes'])).code, 0);
    assert.equal((await api('GET', 'accounts/me', owner.accessToken)).body.data.status, 'suspended');
    assert.equal((await g.cli(['account', 'activate', accountId])).code, 0);

    assert.equal(
      (await g.cli(['account', 'member', 'add', accountId, '--user', 'member-e2e@example.test', '--role', 'viewer']))
        .code,
      0,
    );
    const key = await api('POST', `accounts/${accountId}/api-keys`, member.accessToken, { name: 'e2e' });
    assert.equal((await api('GET', `accounts/${accountId}`, key.body.data.key)).status, 200);
    assert.equal((await api('GET', `accounts/${accountId}`, member.accessToken)).body.data.role, 'viewer');
    const removed = await g.cli(['account', 'member', 'remove', accountId, member.user.id, '--yes', '--json']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(JSON.parse(removed.stdout).revokedApiKeys.length, 1);
    assert.equal((await api('GET', `accounts/${accountId}`, key.body.data.key)).status, 401);
    // the membership is read on every request: the session loses the account at once, and
    // stays signed in (a removal ends the account's reach, not the sign-in)
    assert.equal((await api('GET', `accounts/${accountId}`, member.accessToken)).status, 403);
    assert.equal((await api('GET', 'auth/me', member.accessToken)).status, 200);

    const invited = await api('POST', `accounts/${accountId}/invitations`, owner.accessToken, {
      email: 'new-e2e@example.test',
      role: 'member',
    });
    assert.equal(invited.status, 201);
    const outbox = await g.cli(['mail', 'list', '--json']);
    assert.match(outbox.stdout, new RegExp(`${g.url.replace(/[.]/g, '\\.')}/invitations/accept\\?token=`));
    // The page checks the link before anything else: a made-up one is told so (docs/accounts.md).
    const page = await fetch(`${g.url}/invitations/accept?token=abcdefghijklmnop`);
    assert.equal(page.status, 410);
    assert.match(await page.text(), /This invitation cannot be used/);
  });
});
