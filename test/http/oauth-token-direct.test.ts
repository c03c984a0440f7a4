import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { REDIRECT, approvedCodeForm, basic, form, makeClient } from '../helpers/oauth.js';
import { requestsOverSocket } from '../helpers/over-socket.js';

// POST /oauth/token over the real socket: a plain form is answered by the kernel's direct form
// (docs/kernel.md, Direct forms; docs/oauth.md, Performance), the same answer as the route's.
const TOKEN = '/api/v1/oauth/token';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** Headers that differ between any two answers. */
const PER_REQUEST = new Set([
  'date',
  'x-request-id',
  'keep-alive',
  'connection',
  'x-ratelimit-remaining',
  'retry-after',
  'content-length',
]);
const headersOf = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => !PER_REQUEST.has(name)));

describe('the token endpoint in front of hapi', () => {
  let t: TestApp;
  let send: ReturnType<typeof requestsOverSocket>;
  let client: { clientId: string; clientSecret: string | null };
  let userId: string;
  before(async () => {
    t = await createTestApp({ env: { GANTRY_LOG_LEVEL: 'info', GANTRY_METRICS_PORT: '0' } });
    send = requestsOverSocket(t.server);
    await t.server.start();
    client = await makeClient(t);
    userId = (await makeUser(t.app)).id;
  });
  after(() => t.close());

  const auth = () => ({ ...FORM, authorization: basic(client.clientId, client.clientSecret!) });
  async function token(body: Record<string, string>, headers: Record<string, string> = auth(), url = TOKEN) {
    const { res, body: bytes, viaHapi } = await send(url, headers, 'POST', form(body));
    return { res, json: JSON.parse(bytes.toString()), viaHapi };
  }
  const refreshToken = async () =>
    (await token(await approvedCodeForm(t, client.clientId, userId), auth(), `${TOKEN}?via=route`)).json.refresh_token;

  it("a refresh is answered without a hapi request: the route's answer, header for header", async () => {
    const direct = await token({ grant_type: 'refresh_token', refresh_token: await refreshToken() });
    assert.equal(direct.viaHapi, false);
    assert.equal(direct.res.status, 200);
    // The same request through the route (a query string keeps it from the direct path).
    const route = await token(
      { grant_type: 'refresh_token', refresh_token: await refreshToken() },
      auth(),
      `${TOKEN}?x=1`,
    );
    assert.equal(route.viaHapi, true);
    assert.equal(route.res.status, 200);
    assert.deepEqual(headersOf(direct.res), headersOf(route.res));
    assert.deepEqual(Object.keys(direct.json), Object.keys(route.json));
    assert.equal(direct.json.token_type, 'Bearer');
    assert.equal(direct.res.headers.get('cache-control'), 'no-store');
    assert.equal(direct.res.headers.get('pragma'), 'no-cache');
    assert.equal(direct.res.headers.get('x-ratelimit-limit'), route.res.headers.get('x-ratelimit-limit'));
    // The rotation happened: the old token is spent, the new one works (through the route too).
    const next = await token(
      { grant_type: 'refresh_token', refresh_token: direct.json.refresh_token },
      auth(),
      `${TOKEN}?y=1`,
    );
    assert.equal(next.res.status, 200, JSON.stringify(next.json));
    // Recorded as every answer is: the request log line and the request counter.
    const line = t.logs.map((l) => JSON.parse(l)).findLast((l) => l.msg === 'request' && l.route === 'oauth.token');
    assert.equal(line?.status, 200);
    const scrape = (await t.app.kernel.metrics.scrape()).body;
    assert.match(scrape, /gantry_http_requests_total\{route="oauth\.token",method="POST",status="200"\} \d+/);
  });

  /** The same request direct and through the route: the same status, body and headers. */
  async function sameAnswer(
    body: Record<string, string>,
    headers: Record<string, string>,
    status: number,
    error: string,
  ) {
    const direct = await token(body, headers);
    const route = await token(body, headers, `${TOKEN}?x=1`);
    assert.equal(direct.viaHapi, false);
    assert.equal(route.viaHapi, true);
    for (const answer of [direct, route]) {
      assert.equal(answer.res.status, status, JSON.stringify(answer.json));
      assert.equal(answer.json.error, error);
    }
    assert.deepEqual(direct.json, route.json);
    assert.deepEqual(headersOf(direct.res), headersOf(route.res));
    return direct;
  }

  it("every error is the route's: RFC 6749 5.2 bodies, statuses and headers", async () => {
    const wrongSecret = { ...FORM, authorization: basic(client.clientId, 'wrong') };
    const cases: Array<[Record<string, string>, Record<string, string>, number, string]> = [
      [{ grant_type: 'refresh_token', refresh_token: 'nope' }, auth(), 400, 'invalid_grant'],
      [{ grant_type: 'refresh_token', refresh_token: 'nope' }, wrongSecret, 401, 'invalid_client'],
      [
        { grant_type: 'refresh_token', refresh_token: 'nope', client_id: client.clientId, client_secret: 'wrong' },
        FORM,
        401,
        'invalid_client',
      ],
      [{ grant_type: 'refresh_token', refresh_token: 'nope' }, FORM, 401, 'invalid_client'],
      [{ grant_type: 'password' }, auth(), 400, 'unsupported_grant_type'],
      [{ refresh_token: 'x' }, auth(), 400, 'invalid_request'],
      [
        { grant_type: 'authorization_code', code: 'nope', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) },
        auth(),
        400,
        'invalid_grant',
      ],
    ];
    for (const [body, headers, status, error] of cases) await sameAnswer(body, headers, status, error);
    const challenged = await token({ grant_type: 'refresh_token', refresh_token: 'x' }, wrongSecret);
    assert.equal(challenged.res.headers.get('www-authenticate'), 'Basic realm="gantry", charset="UTF-8"');
    assert.equal(challenged.res.headers.get('cache-control'), 'no-store');
  });

  it("a grant's own refusals are the route's: a wider scope, another resource, a wrong PKCE verifier", async () => {
    const extras: Record<string, string>[] = [{ scope: 'wallet:read' }, { resource: 'https://elsewhere.example/api' }];
    for (const extra of extras) {
      const body = { grant_type: 'refresh_token', refresh_token: await refreshToken(), ...extra };
      const direct = await token(body);
      const route = await token({ ...body, refresh_token: await refreshToken() }, auth(), `${TOKEN}?x=1`);
      assert.equal(direct.viaHapi, false);
      assert.ok(direct.res.status >= 400, JSON.stringify(direct.json));
      assert.equal(direct.res.status, route.res.status);
      assert.deepEqual(direct.json, route.json);
      assert.deepEqual(headersOf(direct.res), headersOf(route.res));
    }
    // A code is spent by its first use: one for each path.
    const [one, two] = [
      await approvedCodeForm(t, client.clientId, userId),
      await approvedCodeForm(t, client.clientId, userId),
    ];
    const direct = await token({ ...one, code_verifier: 'w'.repeat(43) });
    const route = await token({ ...two, code_verifier: 'w'.repeat(43) }, auth(), `${TOKEN}?x=1`);
    assert.equal(direct.viaHapi, false);
    assert.equal(direct.res.status, 400);
    assert.equal(direct.json.error, 'invalid_grant');
    assert.deepEqual(direct.json, route.json);
    assert.deepEqual(headersOf(direct.res), headersOf(route.res));
  });

  it('a public client exchanges and refreshes without a secret, as through the route', async () => {
    const open = await makeClient(t, { type: 'public' });
    const code = await approvedCodeForm(t, open.clientId, userId);
    const issued = await token({ ...code, client_id: open.clientId }, FORM);
    assert.equal(issued.viaHapi, false);
    assert.equal(issued.res.status, 200, JSON.stringify(issued.json));
    const refreshed = await token(
      { grant_type: 'refresh_token', refresh_token: issued.json.refresh_token, client_id: open.clientId },
      FORM,
    );
    assert.equal(refreshed.res.status, 200, JSON.stringify(refreshed.json));
    await sameAnswer(
      { grant_type: 'refresh_token', refresh_token: 'nope', client_id: open.clientId },
      FORM,
      400,
      'invalid_grant',
    );
  });

  it('a reused refresh token ends its family the same way', async () => {
    const spent = await refreshToken();
    const first = await token({ grant_type: 'refresh_token', refresh_token: spent });
    assert.equal(first.res.status, 200);
    const again = await token({ grant_type: 'refresh_token', refresh_token: spent });
    assert.equal(again.viaHapi, false);
    assert.equal(again.res.status, 400);
    assert.equal(again.json.error, 'invalid_grant');
    const successor = await token({ grant_type: 'refresh_token', refresh_token: first.json.refresh_token });
    assert.equal(successor.json.error, 'invalid_grant', 'the family is revoked');
  });

  it('a request that is not a plain form goes to the route, which answers as always', async () => {
    const json = await send(
      TOKEN,
      { ...auth(), 'content-type': 'application/json' },
      'POST',
      '{"grant_type":"refresh_token"}',
    );
    assert.equal(json.viaHapi, true);
    assert.equal(json.res.status, 400);
    assert.equal(JSON.parse(json.body.toString()).error, 'invalid_request');
  });

  // Last: it spends this address's budget of failed client authentications.
  it("a refused request (429) is the route's: Retry-After and the limit's headers", async () => {
    const wrongSecret = { ...FORM, authorization: basic(client.clientId, 'wrong') };
    let status = 0;
    for (let i = 0; i < 30 && status !== 429; i++)
      status = (await token({ grant_type: 'refresh_token', refresh_token: 'x' }, wrongSecret)).res.status;
    assert.equal(status, 429);
    const direct = await sameAnswer(
      { grant_type: 'refresh_token', refresh_token: 'x' },
      wrongSecret,
      429,
      'invalid_request',
    );
    assert.ok(Number(direct.res.headers.get('retry-after')) >= 1);
    assert.equal(direct.res.headers.get('x-ratelimit-remaining'), '0');
  });
});
