import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp } from '../helpers/app.js';
import { linkCookieOf } from '../helpers/connector-links.js';
import { makeTeam, signedInUser, TEST_PASSWORD } from '../helpers/factories.js';
import { addMember } from '../helpers/tenancy.js';
import { withJson, type JsonResponse } from '../helpers/json-inject.js';
import { startProtectedMcp, type ProtectedMcp } from '../helpers/mcp-protected.js';
import { BROWSER_SESSION_COOKIE } from '../../src/identity/browser-sessions.js';
import { PRE_SESSION_COOKIE } from '../../src/http/page-forms.js';

// Security review 3, N-H3: Mallory started her own per_user link and had Alice's browser open its
// authorization URL; the callback stored Alice's upstream account as Mallory's link. The callback
// is now bound to the browser that started the link; another browser only holds the code for the
// member who started it, signed in on Gantry's page (docs/connectors.md, OAuth linking).
const C = '/api/v1/connectors';
type App = ReturnType<typeof withJson>;

describe('N-H3: a connector link is finished only by the browser, or the member, that started it', () => {
  let t: App;
  let server: ProtectedMcp;
  before(async () => {
    server = await startProtectedMcp([{ name: 'whoami', inputSchema: { type: 'object' } }]);
    t = withJson(
      await createTestApp({
        env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true', GANTRY_WEB_URL: 'https://app.example.test' },
      }),
    );
  });
  after(async () => {
    await t.close();
    await server.close();
  });

  async function perUserTeam() {
    const team = await makeTeam(t.app, ['member']);
    const alice = team.members.member;
    const mallory = await signedInUser(t.app);
    await addMember(t.app, team.account.id, mallory.user.id, 'member');
    const inst = await t.inject({
      method: 'POST',
      url: `${C}/instances`,
      headers: team.owner.headers,
      payload: {
        connectorKey: 'mcp-generic',
        displayName: 'Mail',
        config: { url: server.url },
        credentialMode: 'per_user',
      },
    });
    assert.equal(inst.statusCode, 201, inst.body);
    return { ...team, alice, mallory, id: inst.json().data.id as string };
  }
  const initiate = (h: Record<string, string>, id: string) =>
    t.inject({ method: 'POST', url: `${C}/instances/${id}/oauth/initiate`, headers: h });
  /** A browser follows the authorization URL (the upstream consents at once) back to Gantry's callback. */
  async function finishIn(started: JsonResponse, cookie: string | null) {
    const answer = await fetch(started.json().data.redirectUrl, { redirect: 'manual' });
    const back = new URL(String(answer.headers.get('location')));
    return t.inject({ method: 'GET', url: back.pathname + back.search, headers: cookie ? { cookie } : {} });
  }
  const status = async (h: Record<string, string>, id: string) =>
    (await t.inject({ method: 'GET', url: `${C}/instances/${id}/credentials/status`, headers: h })).json().data;
  const browserOf = async (userId: string) =>
    `${BROWSER_SESSION_COOKIE}=${await t.app.services.identity.browserSessions.start(userId)}`;
  const cookieFrom = (res: JsonResponse, name: string) =>
    ([res.headers['set-cookie']].flat() as string[]).find((c) => c?.startsWith(`${name}=`))!.split(';')[0];
  const linked = (accountId: string) =>
    t.app.services.audit
      .log(accountId, { limit: 100 })
      .then((log) => log.items.filter((row) => row.action === 'connector.oauth_linked'));

  it("the review's attack: Alice's browser finishing Mallory's link stores nothing, and Alice is told why", async () => {
    const { alice, mallory, id, account } = await perUserTeam();
    const started = await initiate(mallory.headers, id);
    assert.equal(started.statusCode, 200, started.body);
    const exchanges = server.tokenRequests.length;

    // Alice's browser (signed in to Gantry as herself) follows Mallory's link.
    const aliceBrowser = await browserOf(alice.user.id);
    const callback = await finishIn(started, aliceBrowser);
    assert.equal(callback.statusCode, 303);
    const page = String(callback.headers.location);
    assert.match(page, /^\/connectors\/link\/[0-9a-f]{64}$/);
    assert.equal(server.tokenRequests.length, exchanges, 'the code was not redeemed');
    const hold = `${aliceBrowser}; ${cookieFrom(callback, 'gantry_connector_link')}`;
    const shown = await t.inject({ method: 'GET', url: page, headers: { cookie: hold } });
    assert.equal(shown.statusCode, 403);
    assert.match(shown.body, /This link was started by someone else/);
    // Neither can she confirm it, nor can Mallory finish it from her own browser.
    const forced = await t.inject({
      method: 'POST',
      url: page,
      headers: { cookie: hold, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'decision=confirm&csrf=x',
    });
    assert.equal(forced.statusCode, 403);
    const malloryBrowser = `${await browserOf(mallory.user.id)}; ${linkCookieOf(started).cookie}`;
    const fromMallory = await t.inject({ method: 'GET', url: page, headers: { cookie: malloryBrowser } });
    assert.equal(fromMallory.statusCode, 403);
    assert.match(fromMallory.body, /Finish in the browser you connected with/);

    assert.equal(server.tokenRequests.length, exchanges);
    assert.equal((await status(mallory.headers, id)).configured, false);
    assert.deepEqual(await linked(account.id), []);
    // The review's step 4: Mallory's calls still have no identity to borrow.
    const tools = await t.inject({ method: 'POST', url: `${C}/instances/${id}/sync-tools`, headers: mallory.headers });
    assert.equal(tools.statusCode, 409);
    assert.match(tools.json().error.message, /you have not linked yours/);
  });

  it('the ordinary link: the browser that started it finishes it at once', async () => {
    const { mallory, id, account } = await perUserTeam();
    const started = await initiate(mallory.headers, id);
    const done = await finishIn(started, linkCookieOf(started).cookie);
    assert.equal(done.statusCode, 302);
    const outcome = new URL(String(done.headers.location));
    assert.equal(outcome.searchParams.get('status'), 'success', outcome.href);
    assert.equal((await status(mallory.headers, id)).configured, true);
    assert.equal((await linked(account.id)).length, 1);
  });

  it('a client on another site (no cookie at the callback): the member who started it signs in on the page and confirms', async () => {
    const { mallory, id } = await perUserTeam();
    const started = await initiate(mallory.headers, id);
    const callback = await finishIn(started, null);
    const page = String(callback.headers.location);
    const bound = cookieFrom(callback, 'gantry_connector_link');
    // No session in this browser: the page asks to sign in, and posts back to itself.
    const signIn = await t.inject({ method: 'GET', url: page, headers: { cookie: bound } });
    assert.equal(signIn.statusCode, 401);
    assert.match(signIn.body, /Sign in to finish connecting/);
    const pre = cookieFrom(signIn, PRE_SESSION_COOKIE);
    const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.body)![1];
    const signedIn = await t.inject({
      method: 'POST',
      url: page,
      headers: { cookie: `${bound}; ${pre}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        action: 'signin',
        csrf,
        email: mallory.user.email,
        password: TEST_PASSWORD,
      }).toString(),
    });
    assert.equal(signedIn.statusCode, 303, signedIn.body);
    const session = cookieFrom(signedIn, BROWSER_SESSION_COOKIE);
    const browser = `${bound}; ${session}`;
    const confirm = await t.inject({ method: 'GET', url: page, headers: { cookie: browser } });
    assert.equal(confirm.statusCode, 200, confirm.body);
    assert.match(confirm.body, /Finish connecting Mail/);
    assert.ok(confirm.body.includes(mallory.user.email));
    const exchanges = server.tokenRequests.length;
    const done = await t.inject({
      method: 'POST',
      url: page,
      headers: { cookie: browser, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `decision=confirm&csrf=${encodeURIComponent(/name="csrf" value="([^"]+)"/.exec(confirm.body)![1])}`,
    });
    assert.equal(done.statusCode, 303);
    assert.equal(new URL(String(done.headers.location)).searchParams.get('status'), 'success');
    assert.equal(server.tokenRequests.length, exchanges + 1);
    assert.equal((await status(mallory.headers, id)).configured, true);
    // Once: the page has nothing left to finish.
    const again = await t.inject({ method: 'GET', url: page, headers: { cookie: browser } });
    assert.equal(again.statusCode, 404);
  });

  it('cancelling a held link stores nothing', async () => {
    const { mallory, id } = await perUserTeam();
    const started = await initiate(mallory.headers, id);
    const callback = await finishIn(started, null);
    const page = String(callback.headers.location);
    const browser = `${cookieFrom(callback, 'gantry_connector_link')}; ${await browserOf(mallory.user.id)}`;
    const confirm = await t.inject({ method: 'GET', url: page, headers: { cookie: browser } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(confirm.body)![1];
    const exchanges = server.tokenRequests.length;
    const cancelled = await t.inject({
      method: 'POST',
      url: page,
      headers: { cookie: browser, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `decision=cancel&csrf=${encodeURIComponent(csrf)}`,
    });
    assert.equal(cancelled.statusCode, 303);
    assert.equal(new URL(String(cancelled.headers.location)).searchParams.get('reason'), 'cancelled');
    assert.equal(server.tokenRequests.length, exchanges);
    assert.equal((await status(mallory.headers, id)).configured, false);
  });
});
