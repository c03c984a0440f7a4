import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { withJson } from '../helpers/json-inject.js';

type App = ReturnType<typeof withJson>;
import { startDocumentHost, type DocumentHost } from '../helpers/metadata-documents.js';
import { postToken } from '../helpers/mcp-oauth.js';
import { authorizeAndAllow, authorizeQuery, pkcePair } from '../helpers/oauth.js';

// The operator's choice of Client ID Metadata Documents (docs/oauth.md): on or off, and the
// hosts documents may come from. The document host listens on loopback: private networks allowed.
const LOOPBACK_REDIRECT = 'http://127.0.0.1/callback';
const PRIVATE = { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', GANTRY_RATE_LIMIT_MULTIPLIER: '100' };

let host: DocumentHost;
before(async () => {
  host = await startDocumentHost();
});
after(() => host.close());

async function withApp<T>(env: NodeJS.ProcessEnv, run: (t: App) => Promise<T>, dataDir?: string) {
  const t = withJson(await createTestApp({ env: { ...PRIVATE, ...env }, dataDir }));
  try {
    return await run(t);
  } finally {
    await t.close();
  }
}

const discovery = async (t: App) =>
  Promise.all(
    ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'].map(
      async (url) => (await t.inject(url)).json() as Record<string, unknown>,
    ),
  );

/** The refusal page: 400, never a redirect, its two paragraphs (what is wrong, what to do) as text. */
async function refusal(t: App, clientId: string) {
  const res = await t.inject(authorizeQuery(clientId, pkcePair().challenge, { redirect_uri: LOOPBACK_REDIRECT }));
  assert.equal(res.statusCode, 400, res.payload);
  assert.equal(res.headers.location, undefined);
  const match = /<h1>This sign-in request cannot be completed<\/h1>\n<p>([^<]*)<\/p>\n<p>([^<]*)<\/p>/.exec(
    res.payload,
  );
  assert.ok(match, res.payload);
  const text = (html: string) => html.replace(/&#39;/g, "'");
  return { problem: text(match[1]), advice: text(match[2]) };
}

const OPERATOR_CLIENT =
  'ask the operator of this server for a client registered for you, and give your application its client ID';
const SELF_REGISTER = "use your application's option to register itself with this server (dynamic client registration)";

describe('documents switched off (GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS=off)', () => {
  test('discovery says false; authorize refuses unfetched, saying what to do instead', async () => {
    const url = host.serve('/off.json', { client_name: 'Off Agent', redirect_uris: [LOOPBACK_REDIRECT] });
    await withApp({ GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS: 'off' }, async (t) => {
      for (const doc of await discovery(t)) {
        assert.equal(doc.client_id_metadata_document_supported, false);
        assert.equal(typeof doc.registration_endpoint, 'string', 'dynamic registration stays open');
      }
      const page = await refusal(t, url);
      assert.equal(
        page.problem,
        'This server does not accept applications that name themselves by a metadata document (a client_id that is a web address): its operator switched them off.',
      );
      assert.equal(page.advice, `What you can do instead: ${OPERATOR_CLIENT}; or ${SELF_REGISTER}, if it has one.`);
      assert.equal(host.hits.get('/off.json'), undefined, 'nothing fetched');
      assert.ok(
        t.logs.some((l) => l.includes('refused by the operator') && l.includes('documents switched off')),
        t.logs.join('\n'),
      );
    });
  });

  test('with dynamic registration off too, the page names the operator only', async () => {
    const url = host.serve('/off-both.json', { redirect_uris: [LOOPBACK_REDIRECT] });
    const env = { GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS: 'false', GANTRY_OAUTH_DYNAMIC_REGISTRATION: 'false' };
    await withApp(env, async (t) => {
      const [doc] = await discovery(t);
      assert.equal(doc.client_id_metadata_document_supported, false);
      assert.equal(doc.registration_endpoint, undefined);
      assert.equal((await refusal(t, url)).advice, `What you can do instead: ${OPERATOR_CLIENT}.`);
    });
  });

  test('a document client authorized before the switch is refused at token and authorize after it', async () => {
    const url = host.serve('/before.json', {
      client_name: 'Earlier Agent',
      redirect_uris: [LOOPBACK_REDIRECT],
      scope: 'email:read profile:read',
    });
    await withApp({}, async (on) => {
      const user = await makeUser(on.app);
      const { verifier, challenge } = pkcePair();
      const { location } = await authorizeAndAllow(
        on,
        authorizeQuery(url, challenge, { redirect_uri: LOOPBACK_REDIRECT }),
        user.email,
        user.password,
      );
      const issued = await postToken(on, {
        grant_type: 'authorization_code',
        client_id: url,
        code: location.searchParams.get('code')!,
        redirect_uri: LOOPBACK_REDIRECT,
        code_verifier: verifier,
      });
      assert.equal(issued.statusCode, 200, issued.payload);
      const refresh = { grant_type: 'refresh_token', client_id: url, refresh_token: issued.json().refresh_token };

      // The same installation restarted with documents off: the stored copy is no client any more.
      await withApp(
        { GANTRY_OAUTH_CLIENT_METADATA_DOCUMENTS: 'off' },
        async (off) => {
          const res = await postToken(off, refresh);
          assert.equal(res.statusCode, 401, res.payload);
          assert.equal(res.json().error, 'invalid_client');
          assert.match((await refusal(off, url)).problem, /its operator switched them off/);
          // The operator still sees it, to delete it (docs/oauth.md, Clients).
          assert.equal((await off.app.services.oauth.clients.show(url)).registration, 'metadata_document');
        },
        on.dataDir,
      );
      // Refused, not spent: back on, the same refresh token still works.
      const again = await postToken(on, refresh);
      assert.equal(again.statusCode, 200, again.payload);
    });
  });
});

describe('trusted document hosts (GANTRY_OAUTH_CLIENT_METADATA_HOSTS)', () => {
  test('a document from another host is refused unfetched; discovery still says true', async () => {
    const url = host.serve('/untrusted.json', { redirect_uris: [LOOPBACK_REDIRECT] });
    await withApp({ GANTRY_OAUTH_CLIENT_METADATA_HOSTS: 'claude.ai, *.chatgpt.com' }, async (t) => {
      for (const doc of await discovery(t)) assert.equal(doc.client_id_metadata_document_supported, true);
      const page = await refusal(t, url);
      assert.equal(
        page.problem,
        'This server accepts metadata documents only from the hosts its operator trusts, and 127.0.0.1 is not one of them.',
      );
      assert.equal(
        page.advice,
        `What you can do instead: ${OPERATOR_CLIENT}; or ${SELF_REGISTER}, if it has one; or ask the operator to trust 127.0.0.1.`,
      );
      assert.equal(host.hits.get('/untrusted.json'), undefined, 'nothing fetched');
      // A name under a trusted wildcard is not the wildcard's own host, nor a look-alike suffix.
      for (const other of ['https://chatgpt.com/oauth/codex/client.json', 'https://evilchatgpt.com/client.json'])
        assert.match((await refusal(t, other)).problem, /is not one of them/);
    });
  });

  test('a document from a listed host is fetched and used', async () => {
    const url = host.serve('/trusted.json', {
      client_name: 'Trusted Agent',
      redirect_uris: [LOOPBACK_REDIRECT],
      scope: 'email:read',
    });
    await withApp({ GANTRY_OAUTH_CLIENT_METADATA_HOSTS: 'docs.example,127.0.0.1' }, async (t) => {
      const res = await t.inject(
        authorizeQuery(url, pkcePair().challenge, {
          redirect_uri: 'http://127.0.0.1:50123/callback',
          scope: 'email:read',
        }),
      );
      assert.equal(res.statusCode, 200, t.logs.filter((l) => l.includes('metadata')).join('\n') || res.payload);
      assert.match(res.payload, /Trusted Agent \(unverified, published by 127\.0\.0\.1:\d+\)/);
      assert.equal(host.hits.get('/trusted.json'), 1);
    });
  });
});

test('a document that cannot be fetched: the page says what to do instead, whatever the cause', async () => {
  await withApp({}, async (t) => {
    for (const url of [`${host.base}/missing.json`, 'https://doesnotexist-xyz.invalid/client.json']) {
      const page = await refusal(t, url);
      assert.equal(page.problem, "This application's metadata document could not be fetched.");
      assert.equal(
        page.advice,
        `The application names itself by a document on its publisher's web site, which this server must download first; a server that cannot reach that site cannot accept the application this way. What you can do instead: ${OPERATOR_CLIENT}; or ${SELF_REGISTER}, if it has one.`,
      );
    }
  });
});
