import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';

// N-L5 (security review 3): self-registered clients made the consent page say "You will be sent
// back to microsoft-edge:" (Edge then opens the attacker's page with the code) and named
// themselves "Gantry", "Claude\u202Eedoc" or "G\u0430ntry". Registration now refuses both
// (docs/oauth.md, Self-registered clients).
const REGISTER = '/api/v1/oauth/register';
let t: ReturnType<typeof withJson>;
before(async () => {
  t = withJson(await createTestApp({ env: { GANTRY_RATE_LIMIT_MULTIPLIER: '100' } }));
});
after(async () => t.close());

const register = (payload: Record<string, unknown>) =>
  t.inject({ method: 'POST', url: REGISTER, payload, remoteAddress: '203.0.113.9' });

/** Registers, expecting a 400 in RFC 7591 form with `error`; nothing is stored. */
async function refused(payload: Record<string, unknown>, error: string, description: RegExp) {
  const before = (await t.app.services.oauth.clients.list()).length;
  const res = await register(payload);
  assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
  assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'error_description']);
  assert.equal(res.json().error, error, JSON.stringify(payload));
  assert.match(res.json().error_description, description, JSON.stringify(payload));
  assert.equal((await t.app.services.oauth.clients.list()).length, before);
}

/** The review's redirect URIs that launch a browser at a page of the client's choosing. */
const LAUNCHERS = [
  'microsoft-edge:https://evil.example/cb',
  'x-safari-https://evil.example/cb',
  'googlechromes://evil.example/cb',
  'googlechrome://evil.example/cb',
  'firefox://evil.example/cb',
  'opera://evil.example/cb',
  'brave://evil.example/cb',
  'chrome-extension://abcdefghijklmnopabcdefghijklmnop/cb',
  'moz-extension://0f9e8d7c-6b5a-4c3d-2e1f-0a9b8c7d6e5f/cb',
  'ms-settings:privacy',
  'https.evil://claude.ai/cb',
  'httpss://claude.ai/cb',
];

describe('N-L5: redirect URIs by application_type', () => {
  test('a web client (the default, or said) may use only https or loopback http', async () => {
    for (const uri of [...LAUNCHERS, 'com.example.app:/cb', 'cursor://anysphere.cursor-retrieval/oauth/callback'])
      await refused({ application_type: 'web', redirect_uris: [uri] }, 'invalid_redirect_uri', /must be an https URL/);
    // No type, and an https URI beside the app's scheme: a web client.
    await refused(
      { redirect_uris: ['https://app.example/cb', 'com.example.app:/cb'] },
      'invalid_redirect_uri',
      /must be an https URL/,
    );
    const ok = await register({ redirect_uris: ['https://app.example/cb', 'http://127.0.0.1/cb'] });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().application_type, 'web');
  });

  test('a registration naming no type whose redirect URIs are all an app scheme is native (Cursor), launchers still refused', async () => {
    for (const uri of LAUNCHERS)
      await refused({ redirect_uris: [uri] }, 'invalid_redirect_uri', /a browser or the system handles/);
    const cursor = await register({
      client_name: 'Cursor',
      redirect_uris: ['cursor://anysphere.cursor-retrieval/oauth/user-gantry/callback'],
      token_endpoint_auth_method: 'none',
    });
    assert.equal(cursor.statusCode, 201, cursor.body);
    assert.equal(cursor.json().application_type, 'native');
  });

  test('a native client may use its own scheme, never one that launches a browser', async () => {
    for (const uri of LAUNCHERS)
      await refused(
        { application_type: 'native', redirect_uris: ['com.example.app:/cb', uri] },
        'invalid_redirect_uri',
        /a browser or the system handles/,
      );
    const ok = await register({
      application_type: 'native',
      redirect_uris: ['com.example.app:/cb', 'https://app.example/cb', 'http://127.0.0.1/cb'],
    });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().application_type, 'native');
    const stored = await t.app.services.oauth.clients.show(ok.json().client_id);
    assert.deepEqual(stored.redirectUris, ['com.example.app:/cb', 'https://app.example/cb', 'http://127.0.0.1/cb']);
  });

  test('application_type is web or native', async () => {
    for (const type of ['desktop', '', 'NATIVE', ['native']])
      await refused(
        { application_type: type, redirect_uris: ['https://app.example/cb'] },
        'invalid_client_metadata',
        /application_type must be web or native/,
      );
  });
});

describe('N-L5: confusable client names', () => {
  test("the review's names are refused", async () => {
    const cases: Array<[string, RegExp]> = [
      ['Gantry', /must not use the name Gantry/],
      ['Gantry Admin Console', /must not use the name Gantry/],
      ['Gantry \u2713 verified', /check marks/],
      ['Claude\u202Eedoc', /invisible or text-direction/],
      ['G\u0430ntry', /must not mix Latin, Cyrillic and Greek/],
      ['a\u200bb', /invisible or text-direction/],
      ['Official MCP Agent', /verified or official/],
    ];
    for (const [name, description] of cases)
      await refused(
        { client_name: name, redirect_uris: ['https://app.example/cb'] },
        'invalid_client_metadata',
        description,
      );
    const ok = await register({ client_name: 'Claude Code', redirect_uris: ['https://app.example/cb'] });
    assert.equal(ok.statusCode, 201, ok.body);
  });

  test("the brand refused is the operator's own (GANTRY_BRAND_NAME)", async () => {
    const branded = withJson(await createTestApp({ env: { GANTRY_BRAND_NAME: 'Acme Cloud' } }));
    try {
      const named = (client_name: string) =>
        branded.inject({
          method: 'POST',
          url: REGISTER,
          payload: { client_name, redirect_uris: ['https://a.example/cb'] },
        });
      const imitation = await named('\u0410\u0421\u041c\u0415 Cloud Console');
      assert.equal(imitation.statusCode, 400, imitation.body);
      assert.match(imitation.json().error_description, /must not use the name Acme Cloud/);
      assert.equal((await named('ACME  cloud')).statusCode, 400);
      assert.equal((await named('Acme Tools')).statusCode, 201, 'one word of the brand alone is not the brand');
      assert.equal((await named('Gantry Sync')).statusCode, 201);
    } finally {
      await branded.close();
    }
  });
});
