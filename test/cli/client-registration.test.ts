import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestApp } from '../helpers/app.js';
import { cli } from '../helpers/cli.js';
import { startDocumentHost, type DocumentHost } from '../helpers/metadata-documents.js';
import { authorizeQuery, pkcePair, REDIRECT } from '../helpers/oauth.js';

let dataDir: string;
let host: DocumentHost;
let dynamicId: string;
let documentId: string;
before(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'gantry-cli-registration-'));
  host = await startDocumentHost();
  // One client of each kind, made the way they are in the field: the CLI, RFC 7591, a document.
  const created = await cli(
    ['client', 'create', '--name', 'Partner', '--type', 'public', '--redirect-uri', REDIRECT, '--scope', 'email:read'],
    { dataDir },
  );
  assert.equal(created.code, 0, created.stderr);
  const t = await createTestApp({ dataDir, env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
  try {
    const registered = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/register',
      payload: { client_name: 'Registered', redirect_uris: ['http://127.0.0.1/cb'] },
    });
    dynamicId = JSON.parse(registered.payload).client_id;
    documentId = host.serve('/client.json', {
      client_name: 'Documented',
      redirect_uris: [REDIRECT],
      scope: 'email:read profile:read',
    });
    assert.equal((await t.inject(authorizeQuery(documentId, pkcePair().challenge))).statusCode, 200);
  } finally {
    await t.close();
  }
});
after(async () => {
  await host.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('client list shows self-registered clients with how they registered', async () => {
  const res = await cli(['client', 'list', '--json'], { dataDir });
  assert.equal(res.code, 0, res.stderr);
  const kinds = Object.fromEntries(
    res.json<Array<{ name: string; registration: string }>>().map((c) => [c.name, c.registration]),
  );
  assert.deepEqual(kinds, { Partner: 'cli', Registered: 'dynamic', Documented: 'metadata_document' });
  const text = await cli(['client', 'list'], { dataDir });
  assert.match(text.stdout, /registration/);
  assert.match(text.stdout, /metadata_document/);
  assert.match(text.stdout, /dynamic/);
});

test('client show and delete take a document URL as the client id', async () => {
  const shown = await cli(['client', 'show', documentId], { dataDir });
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /registration:\s+metadata_document/);
  assert.match(shown.stdout, new RegExp(`client id:\\s+${documentId.replace(/[.]/g, '\\.')}`));
  const dynamic = await cli(['client', 'show', dynamicId, '--json'], { dataDir });
  assert.equal(dynamic.json<{ registration: string }>().registration, 'dynamic');

  const removed = await cli(['client', 'delete', documentId, '--yes', '--json'], { dataDir });
  assert.equal(removed.code, 0, removed.stderr);
  const after = await cli(['client', 'list', '--json'], { dataDir });
  assert.deepEqual(
    after
      .json<Array<{ name: string }>>()
      .map((c) => c.name)
      .sort(),
    ['Partner', 'Registered'],
  );
  const gone = await cli(['client', 'show', documentId], { dataDir });
  assert.equal(gone.code, 2);
});
