import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli, type CliResult, type TerminalStep } from '../helpers/cli.js';
import { makeUser, signedInUser } from '../helpers/factories.js';
import { asUser } from '../helpers/accounts.js';
import { approvedCodeForm, basic, form, FORM_HEADERS, makeClient } from '../helpers/oauth.js';
import { credentialKeyring } from '../helpers/postgres.js';
import { OPERATOR } from '../../src/accounts/access.js';

/**
 * Destructive commands (docs/kernel.md, CLI): off a terminal they need --yes (exit 2 naming it,
 * nothing changed); on one they ask, naming exactly what will happen; --yes never asks.
 */
describe('destructive commands: --yes, or a confirmation on a terminal', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());
  const run = (args: string[], terminal?: TerminalStep[]) => cli(args, { dataDir: t.dataDir, terminal });
  const db = () => t.app.kernel.db;

  const liveGrants = async (clientId: string) =>
    (
      await db()
        .selectFrom('oauth_grants')
        .select('id')
        .where('client_id', '=', clientId)
        .where('revoked_at', 'is', null)
        .execute()
    ).length;
  const secretHash = async (clientId: string) =>
    (await db().selectFrom('oauth_clients').select('secret_hash').where('id', '=', clientId).executeTakeFirst())
      ?.secret_hash;
  const accountStatus = async (id: string) => (await t.app.services.accounts.show(id)).status;

  /** A client one user has approved: one live grant, with its tokens. */
  async function grantedClient(name: string) {
    const client = await makeClient(t, { name });
    const user = await makeUser(t.app);
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: { ...FORM_HEADERS, authorization: basic(client.clientId, client.clientSecret!) },
      payload: form(await approvedCodeForm(t, client.clientId, user.id)),
    });
    assert.equal(res.statusCode, 200, res.payload);
    return client;
  }

  /** An account closed by its owner, and one whose deletion is approved (due for the purge). */
  async function closedAccount(slug: string, approved = false) {
    const owner = await makeUser(t.app);
    const account = await t.app.services.accounts.create(owner.id, { slug, legalName: `Legal ${slug}` });
    await t.app.services.accounts.deletion.softDelete(asUser(owner.id), account.id);
    if (approved) await t.app.services.accounts.deletion.approve(OPERATOR, account.id);
    return account;
  }

  function assertRefusedForYes(res: CliResult, what: RegExp) {
    assert.equal(res.code, 2, res.stderr);
    assert.equal(res.stderr.split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /--yes/);
    assert.match(res.stderr, what);
    const { error } = res.json<{ error: { code: string; message: string } }>();
    assert.equal(error.code, 'USAGE');
    assert.match(error.message, /--yes.*nothing was changed/);
  }

  it('off a terminal, each one without --yes exits 2 naming --yes, and nothing changes', async () => {
    const client = await grantedClient('Off Terminal App');
    const secretBefore = await secretHash(client.clientId);
    const owner = await makeUser(t.app);
    const live = await t.app.services.accounts.create(owner.id, { slug: 'off-terminal', legalName: 'Off Terminal' });
    const member = await signedInUser(t.app);
    await t.app.services.accounts.members.add(OPERATOR, live.id, { chainerId: member.user.id, role: 'member' });
    const closed = await closedAccount('off-terminal-closed');
    const due = await closedAccount('off-terminal-due', true);
    await t.app.services.ai.admin.set({ name: 'openai', baseUrl: 'https://ai.example.test', apiKey: 'sk-test-1' });
    const keyring = await credentialKeyring(t.dataDir);

    const cases: Array<[string[], RegExp]> = [
      [
        ['client', 'delete', 'Off Terminal App'],
        /Delete client 'Off Terminal App' \(id [0-9a-f-]{36}\) and revoke its 1 grant/,
      ],
      [['client', 'rotate-secret', client.clientId], /Replace the secret of client 'Off Terminal App'/],
      [['secrets', 'rotate', '--settle-ms', '0'], /new credential key/],
      [['account', 'suspend', 'off-terminal'], /Suspend account 'off-terminal'/],
      [['account', 'approve-deletion', 'off-terminal-closed'], /Approve the deletion of account 'off-terminal-closed'/],
      [['account', 'purge'], /Hard-delete 1 account\(s\) now: 'off-terminal-due'/],
      [['account', 'member', 'remove', 'off-terminal', member.user.email], new RegExp(`Remove ${member.user.email}`)],
      [['provider', 'remove', 'openai'], /Remove AI provider openai \(https:\/\/ai\.example\.test\)/],
    ];
    for (const [args, what] of cases) assertRefusedForYes(await run([...args, '--json']), what);

    assert.equal(await liveGrants(client.clientId), 1);
    assert.equal(await secretHash(client.clientId), secretBefore);
    assert.deepEqual(await credentialKeyring(t.dataDir), keyring);
    assert.equal(await accountStatus(live.id), 'active');
    assert.equal(await accountStatus(closed.id), 'closed');
    assert.equal(await accountStatus(due.id), 'deletion_approved');
    assert.equal((await t.app.services.accounts.members.get(live.id, member.user.id)).role, 'member');
    assert.deepEqual(
      (await t.app.services.ai.admin.addresses()).map((p) => p.name),
      ['openai'],
    );
    await t.app.services.accounts.deletion.purgeDue(new Date());
  });

  it('on a terminal the question names what will happen; "no" changes nothing (exit 1), "yes" does it', async () => {
    const client = await grantedClient('Prompted App');
    const question = new RegExp(
      `Delete client 'Prompted App' \\(id ${client.clientId}\\) and revoke its 1 grant\\(s\\)\\? Every token issued to it stops working`,
    );
    const declined = await run(['client', 'delete', 'Prompted App', '--json'], [{ expect: question, keys: 'n' }]);
    assert.equal(declined.code, 1, declined.stderr);
    assert.deepEqual(declined.json(), { error: { code: 'CANCELLED', message: 'cancelled; nothing was changed' } });
    assert.equal(await liveGrants(client.clientId), 1);

    const accepted = await run(['client', 'delete', 'Prompted App', '--json'], [{ expect: question, keys: 'y' }]);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.deepEqual(accepted.json(), { clientId: client.clientId, deleted: true, revokedGrants: 1 });
    assert.equal(await liveGrants(client.clientId), 0);
    assert.equal(await secretHash(client.clientId), undefined);

    const owner = await makeUser(t.app);
    const account = await t.app.services.accounts.create(owner.id, { slug: 'prompted-acme', legalName: 'Prompted' });
    const suspended = await run(
      ['account', 'suspend', 'prompted-acme'],
      [{ expect: /Suspend account 'prompted-acme' \(id [0-9a-f-]{36}\)\? Its 1 member\(s\) keep reading/, keys: 'y' }],
    );
    assert.equal(suspended.code, 0, suspended.stderr);
    assert.equal(await accountStatus(account.id), 'suspended');
  });

  it('--yes never asks, even on a terminal', async () => {
    const client = await grantedClient('Yes App');
    const res = await run(['client', 'delete', client.clientId, '--yes', '--json'], []);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.screen, '');
    assert.equal(res.json<{ revokedGrants: number }>().revokedGrants, 1);
  });

  it('nothing to destroy, nothing to ask: an empty purge and a public client need no --yes', async () => {
    const purge = await run(['account', 'purge', '--json']);
    assert.equal(purge.code, 0, purge.stderr);
    assert.deepEqual(purge.json(), { purged: [] });
    const pub = await makeClient(t, { type: 'public', name: 'Public One' });
    const rotate = await run(['client', 'rotate-secret', pub.clientId, '--json']);
    assert.equal(rotate.code, 2);
    assert.deepEqual(rotate.json(), { error: { code: 'CONFLICT', message: 'Public clients have no secret' } });
  });
});
