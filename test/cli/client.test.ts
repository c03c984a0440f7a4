import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { cli } from '../helpers/cli.js';
import { databaseText } from '../helpers/postgres.js';

let dataDir: string;
before(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-cli-client-'));
});
after(() => rmSync(dataDir, { recursive: true, force: true }));

const create = (extra: string[] = []) =>
  cli(
    [
      'client',
      'create',
      '--name',
      'Acme',
      '--type',
      'confidential',
      '--redirect-uri',
      'https://acme.example/cb',
      'http://127.0.0.1:9999/cb',
      '--scope',
      'email:read',
      'profile:read',
      '--json',
      ...extra,
    ],
    { dataDir },
  );

/** Every byte of the database, WAL included. */
const rawDb = () => databaseText(dataDir);

test('client create prints the secret once and stores only its SHA-256', async () => {
  const res = await create();
  assert.equal(res.code, 0, res.stderr);
  const body = res.json<{
    clientId: string;
    clientSecret: string;
    name: string;
    type: string;
    redirectUris: string[];
    scopes: string[];
  }>();
  assert.match(body.clientId, /^[0-9a-f-]{36}$/);
  assert.match(body.clientSecret, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(body.name, 'Acme');
  assert.equal(body.type, 'confidential');
  assert.deepEqual(body.redirectUris, ['https://acme.example/cb', 'http://127.0.0.1:9999/cb']);
  assert.deepEqual(body.scopes, ['email:read', 'profile:read']);
  const db = await rawDb();
  assert.ok(!db.includes(body.clientSecret), 'the raw secret is not in the database file');
  assert.ok(db.includes(createHash('sha256').update(body.clientSecret).digest('hex')), 'its SHA-256 is');

  const shown = await cli(['client', 'show', body.clientId, '--json'], { dataDir });
  assert.equal(shown.code, 0);
  assert.ok(!shown.stdout.includes(body.clientSecret));
  assert.equal(shown.json<{ clientSecret?: string }>().clientSecret, undefined);
  const listed = await cli(['client', 'list', '--json'], { dataDir });
  assert.ok(listed.json<Array<{ clientId: string }>>().some((c) => c.clientId === body.clientId));
  assert.ok(!listed.stdout.includes(body.clientSecret));
  assert.ok(!listed.stdout.includes('secretHash'));
});

test('human output shows the secret with a warning that it is not shown again', async () => {
  const res = await cli(
    [
      'client',
      'create',
      '--name',
      'Human',
      '--type',
      'confidential',
      '--redirect-uri',
      'https://h.example/cb',
      '--scope',
      'email:read',
    ],
    { dataDir },
  );
  assert.equal(res.code, 0);
  assert.match(res.stdout, /client secret: [A-Za-z0-9_-]{43}/);
  assert.match(res.stdout, /not shown again/);
});

test('public clients get no secret', async () => {
  const res = await cli(
    [
      'client',
      'create',
      '--name',
      'SPA',
      '--type',
      'public',
      '--redirect-uri',
      'http://localhost:3000/cb',
      '--scope',
      'wallet:read',
      '--json',
    ],
    { dataDir },
  );
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.json<{ clientSecret: null }>().clientSecret, null);
});

test('rotate-secret prints a new secret once; public clients cannot rotate', async () => {
  const created = (await create()).json<{ clientId: string; clientSecret: string }>();
  const rotated = await cli(['client', 'rotate-secret', created.clientId, '--yes', '--json'], { dataDir });
  assert.equal(rotated.code, 0);
  const secret = rotated.json<{ clientSecret: string }>().clientSecret;
  assert.notEqual(secret, created.clientSecret);
  assert.ok(!(await rawDb()).includes(secret));
  const pub = (
    await cli(
      [
        'client',
        'create',
        '--name',
        'P',
        '--type',
        'public',
        '--redirect-uri',
        'https://p.example/cb',
        '--scope',
        'email:read',
        '--json',
      ],
      { dataDir },
    )
  ).json<{ clientId: string }>();
  // A public client has no secret: refused by the service, without a question (no --yes needed).
  const refused = await cli(['client', 'rotate-secret', pub.clientId, '--json'], { dataDir });
  assert.equal(refused.code, 2);
  assert.equal(refused.json<{ error: { code: string } }>().error.code, 'CONFLICT');
});

test('validation: http redirect on a non-loopback host, unknown scope, bad type -> exit 2', async () => {
  const http = await cli(
    [
      'client',
      'create',
      '--name',
      'X',
      '--type',
      'confidential',
      '--redirect-uri',
      'http://acme.example/cb',
      '--scope',
      'email:read',
    ],
    { dataDir },
  );
  assert.equal(http.code, 2);
  assert.match(http.stderr, /https/);
  const scope = await cli(
    [
      'client',
      'create',
      '--name',
      'X',
      '--type',
      'confidential',
      '--redirect-uri',
      'https://acme.example/cb',
      '--scope',
      'admin',
    ],
    { dataDir },
  );
  assert.equal(scope.code, 2);
  assert.match(scope.stderr, /unknown scope/);
  const type = await cli(
    [
      'client',
      'create',
      '--name',
      'X',
      '--type',
      'secret',
      '--redirect-uri',
      'https://acme.example/cb',
      '--scope',
      'email:read',
    ],
    { dataDir },
  );
  assert.equal(type.code, 2);
  const fragment = await cli(
    [
      'client',
      'create',
      '--name',
      'X',
      '--type',
      'public',
      '--redirect-uri',
      'https://acme.example/cb#x',
      '--scope',
      'email:read',
    ],
    { dataDir },
  );
  assert.equal(fragment.code, 2);
});

test('missing options without a TTY: exit 2 naming the flag', async () => {
  const res = await cli(['client', 'create', '--name', 'X', '--type', 'public', '--scope', 'email:read'], { dataDir });
  assert.equal(res.code, 2);
  assert.match(res.stderr, /--redirect-uri/);
  const noName = await cli(['client', 'create'], { dataDir });
  assert.equal(noName.code, 2);
  assert.match(noName.stderr, /--name/);
});

test('delete removes the client; show then fails; unknown id exit 2', async () => {
  const created = (await create()).json<{ clientId: string }>();
  const del = await cli(['client', 'delete', created.clientId, '--yes', '--json'], { dataDir });
  assert.equal(del.code, 0, del.stderr);
  assert.equal(del.json<{ deleted: boolean }>().deleted, true);
  assert.equal((await cli(['client', 'show', created.clientId], { dataDir })).code, 2);
  const again = await cli(['client', 'delete', created.clientId, '--yes', '--json'], { dataDir });
  assert.equal(again.code, 2);
  assert.equal(again.json<{ error: { code: string } }>().error.code, 'NOT_FOUND');
});
