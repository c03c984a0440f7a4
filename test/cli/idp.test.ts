import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { databaseText } from '../helpers/postgres.js';
import { startFakeIdp, type FakeIdp } from '../helpers/fake-idp.js';

let dataDir: string;
let idp: FakeIdp;
before(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-cli-idp-'));
  idp = await startFakeIdp({ clientId: 'gantry', clientSecret: 'very-secret-idp-value' });
});
after(async () => {
  await idp.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const add = (extra: string[] = []) =>
  cli(
    [
      'idp',
      'add',
      '--name',
      'Acme SSO',
      '--issuer',
      idp.issuer,
      '--client-id',
      'gantry',
      '--client-secret',
      'very-secret-idp-value',
      '--domain',
      'Acme.test',
      '@corp.acme.test',
      '--json',
      ...extra,
    ],
    { dataDir },
  );

test('idp add discovers the issuer, seals the secret, prints the redirect URI; list never shows the secret', async () => {
  const res = await add();
  assert.equal(res.code, 0, res.stderr);
  const added = res.json<{ id: string; issuer: string; domains: string[]; redirectUri: string }>();
  assert.equal(added.issuer, idp.issuer);
  assert.deepEqual(added.domains, ['acme.test', 'corp.acme.test']);
  assert.match(added.redirectUri, /\/auth\/sso\/callback$/);
  assert.ok(!res.stdout.includes('very-secret-idp-value'));
  assert.ok(!(await databaseText(dataDir)).includes('very-secret-idp-value'), 'the secret is sealed at rest');
  const list = await cli(['idp', 'list', '--json'], { dataDir });
  assert.equal(list.code, 0, list.stderr);
  const rows = list.json<Array<Record<string, unknown>>>();
  assert.equal(rows.length, 1);
  assert.ok(!list.stdout.includes('very-secret-idp-value'));
});

test('idp add refuses a taken name, a domain bound elsewhere, a bad domain and an issuer without discovery', async () => {
  const again = await add();
  assert.equal(again.code, 2);
  assert.equal(again.json<{ error: { code: string } }>().error.code, 'CONFLICT');
  const badDomain = await cli(
    [
      'idp',
      'add',
      '--name',
      'B',
      '--issuer',
      idp.issuer,
      '--client-id',
      'x',
      '--client-secret',
      'y',
      '--domain',
      'not a domain',
      '--json',
    ],
    { dataDir },
  );
  assert.equal(badDomain.code, 2);
  assert.match(badDomain.stdout, /not an email domain/);
  const noDiscovery = await cli(
    [
      'idp',
      'add',
      '--name',
      'C',
      '--issuer',
      `${idp.issuer}/nothing`,
      '--client-id',
      'x',
      '--client-secret',
      'y',
      '--json',
    ],
    { dataDir },
  );
  assert.equal(noDiscovery.code, 2);
  assert.match(noDiscovery.stdout, /discovery/);
  const plainHttp = await cli(
    [
      'idp',
      'add',
      '--name',
      'D',
      '--issuer',
      'http://idp.example',
      '--client-id',
      'x',
      '--client-secret',
      'y',
      '--json',
    ],
    { dataDir },
  );
  assert.equal(plainHttp.code, 2);
  assert.match(plainHttp.stdout, /https/);
});

test('idp remove needs --yes off a terminal, then removes it', async () => {
  const refused = await cli(['idp', 'remove', 'Acme SSO'], { dataDir });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--yes/);
  const removed = await cli(['idp', 'remove', 'Acme SSO', '--yes', '--json'], { dataDir });
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(removed.json<{ revokedSessions: number }>().revokedSessions, 0);
  const list = await cli(['idp', 'list', '--json'], { dataDir });
  assert.deepEqual(list.json(), []);
  const missing = await cli(['idp', 'remove', 'Acme SSO', '--yes', '--json'], { dataDir });
  assert.equal(missing.code, 2);
  assert.equal(missing.json<{ error: { code: string } }>().error.code, 'NOT_FOUND');
});

/** An account made at the CLI (owner included), with its default workspace. */
async function cliAccount(slug: string) {
  const email = `${slug}@owners.test`;
  const user = await cli(['user', 'create', '--email', email, '--password', 'owner-password-1', '--json'], {
    dataDir,
  });
  assert.equal(user.code, 0, user.stderr);
  const account = await cli(
    ['account', 'create', '--slug', slug, '--legal-name', `${slug} Ltd`, '--owner', email, '--json'],
    { dataDir },
  );
  assert.equal(account.code, 0, account.stderr);
  return account.json<{ id: string; defaultWorkspaceId: string }>();
}

const addNamed = (name: string, extra: string[]) =>
  cli(
    [
      'idp',
      'add',
      '--name',
      name,
      '--issuer',
      idp.issuer,
      '--client-id',
      'gantry',
      '--client-secret',
      's',
      '--json',
      ...extra,
    ],
    { dataDir },
  );

test('idp add --workspace: a workspace of the bound account is stored and listed; any other is refused', async () => {
  const mine = await cliAccount('idp-ws-mine');
  const other = await cliAccount('idp-ws-other');

  const foreign = await addNamed('Foreign', ['--account', mine.id, '--workspace', other.defaultWorkspaceId]);
  assert.equal(foreign.code, 2);
  assert.equal(foreign.json<{ error: { code: string } }>().error.code, 'VALIDATION_FAILED');
  assert.match(
    foreign.stdout,
    new RegExp(`workspace ${other.defaultWorkspaceId} is not a workspace of account ${mine.id}`),
  );
  const unknown = await addNamed('Unknown', ['--account', mine.id, '--workspace', 'no-such-workspace']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stdout, /is not a workspace of account/);
  const accountless = await addNamed('Accountless', ['--workspace', mine.defaultWorkspaceId]);
  assert.equal(accountless.code, 2);
  assert.match(accountless.stdout, /needs the account it belongs to \(--account\)/);
  assert.deepEqual((await cli(['idp', 'list', '--json'], { dataDir })).json(), [], 'nothing stored by a refusal');

  const added = await addNamed('Bound', ['--account', mine.id, '--workspace', mine.defaultWorkspaceId]);
  assert.equal(added.code, 0, added.stderr);
  assert.equal(added.json<{ workspaceId: string }>().workspaceId, mine.defaultWorkspaceId);
  const listed = await cli(['idp', 'list', '--json'], { dataDir });
  assert.deepEqual(
    listed
      .json<Array<{ name: string; accountId: string; workspaceId: string }>>()
      .map((i) => [i.name, i.accountId, i.workspaceId]),
    [['Bound', mine.id, mine.defaultWorkspaceId]],
  );
  const text = await cli(['idp', 'list'], { dataDir });
  assert.match(text.stdout, /workspaceId/);
  assert.ok(text.stdout.includes(mine.defaultWorkspaceId));
});
