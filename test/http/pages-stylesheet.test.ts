import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { gatedTool } from '../helpers/mcp-approvals.js';
import { withJson } from '../helpers/json-inject.js';
import { authorizeQuery, cookieHeader, makeClient, pkcePair, signIn } from '../helpers/oauth.js';

/** What a page must not carry for `style-src 'self'` without 'unsafe-inline' to hold: no inline style, no script. */
function assertStrictPage(name: string, res: { headers: Record<string, unknown>; payload: string }) {
  const csp = String(res.headers['content-security-policy']);
  assert.match(csp, /^default-src 'none'; style-src 'self';/, `${name}: ${csp}`);
  assert.match(csp, /frame-ancestors 'none'/, name);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|script-src/, `${name}: ${csp}`);
  assert.doesNotMatch(res.payload, /<style|\sstyle=|<script/i, `${name} has inline style or script`);
  assert.match(res.payload, /<link rel="stylesheet" href="\/assets\/gantry\.[0-9a-f]{16}\.css">/, name);
}

describe('the pages share one stylesheet under its hash and a strict CSP', () => {
  let t: ReturnType<typeof withJson>;
  let setup: Awaited<ReturnType<typeof gatedTool>>;
  before(async () => {
    t = withJson(await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } }));
    setup = await gatedTool(t);
  });
  after(async () => {
    await setup.fake.close();
    await t.close();
  });

  it('serves the stylesheet at a name carrying its own hash, cached for a year, immutable', async () => {
    const path = t.app.kernel.pages.stylesheetPath;
    const res = await t.inject(path);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/css; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    const hash = createHash('sha256').update(res.payload).digest('hex').slice(0, 16);
    assert.equal(path, `/assets/gantry.${hash}.css`);
    assert.match(res.payload, /\.btn-primary\{/);
    assert.match(res.payload, /:focus-visible\{outline:3px solid/);
    // An old name (an earlier release's stylesheet) is gone, not served with the new content.
    assert.equal((await t.inject('/assets/gantry.0000000000000000.css')).statusCode, 404);
  });

  it('every page family links it and sends the strict CSP: sign-in, consent, approval, status, reset, errors', async () => {
    const user = await makeUser(t.app);
    const client = await makeClient(t);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const signInPage = await t.inject(url);
    assert.equal(signInPage.statusCode, 200);
    assertStrictPage('sign-in', signInPage);
    const { cookies } = await signIn(t, url, user.email, user.password);
    const consent = await t.inject({ url, headers: { cookie: cookieHeader(cookies) } });
    assert.equal(consent.statusCode, 200);
    assertStrictPage('consent', consent);

    const gate = await setup.gate({ target: '/srv' });
    if (gate.proceed) throw new Error('expected a pending approval');
    const approvalSignIn = await t.inject(`/approvals/${gate.approval.id}`);
    assert.equal(approvalSignIn.statusCode, 401);
    assertStrictPage('approval sign-in', approvalSignIn);
    const owner = `gantry_session=${await t.app.services.identity.browserSessions.start(setup.team.owner.user.id)}`;
    const approval = await t.inject({ url: `/approvals/${gate.approval.id}`, headers: { cookie: owner } });
    assert.equal(approval.statusCode, 200);
    assertStrictPage('approval', approval);

    const status = await t.inject('/status');
    assert.equal(status.statusCode, 200);
    assertStrictPage('status', status);
    assert.match(String(status.headers['cache-control']), /^public/, 'the status page stays cacheable');

    for (const path of ['/auth/forgot-password', '/auth/reset-password', '/invitations/accept?token=x']) {
      const res = await t.inject(path);
      assertStrictPage(path, res);
      assert.match(String(res.headers['content-security-policy']), /form-action 'self'/, path);
    }
    assertStrictPage('connector outcome', await t.inject('/settings/connectors?status=success&connector=github'));

    const invalid = await t.inject(`/api/v1/oauth/authorize?client_id=${client.clientId}`);
    assert.equal(invalid.statusCode, 400);
    assertStrictPage('invalid request page', invalid);
    // A kernel error on an HTML route (unsupported media type) is a page in the same layout.
    const kernelError = await t.inject({
      method: 'POST',
      url: '/api/v1/oauth/authorize',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(kernelError.statusCode, 415);
    assertStrictPage('kernel error page', kernelError);
    assert.match(kernelError.payload, /<h1>This request cannot be completed<\/h1>/);
  });

  it('pages name the operator: Gantry by default, in the title and the header', async () => {
    const page = await t.inject('/auth/forgot-password');
    assert.match(page.payload, /<title>Reset your password · Gantry<\/title>/);
    assert.match(page.payload, /<header class="brand"><span>Gantry<\/span><\/header>/);
  });
});

describe('an operator brand and logo', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({
      env: { GANTRY_BRAND_NAME: 'Acme Cloud', GANTRY_BRAND_LOGO_URL: 'https://cdn.acme.test/logo.svg' },
    });
  });
  after(() => t.close());

  it('appears in the titles and headers of the sign-in, consent and status pages, and the CSP allows the logo', async () => {
    const user = await makeUser(t.app);
    const client = await makeClient(t, { name: 'Third App' });
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const signInPage = await t.inject(url);
    const { cookies } = await signIn(t, url, user.email, user.password);
    const consent = await t.inject({ url, headers: { cookie: cookieHeader(cookies) } });
    const status = await t.inject('/status');
    for (const [name, res] of [
      ['sign-in', signInPage],
      ['consent', consent],
      ['status', status],
    ] as const) {
      assert.match(res.payload, /<title>[^<]+ · Acme Cloud<\/title>/, name);
      assert.match(
        res.payload,
        /<header class="brand"><img src="https:\/\/cdn\.acme\.test\/logo\.svg" alt=""><span>Acme Cloud<\/span><\/header>/,
        name,
      );
      assert.match(String(res.headers['content-security-policy']), /img-src https:\/\/cdn\.acme\.test;/, name);
    }
    assert.match(consent.payload, /Third App wants to access your Acme Cloud account/);
    assert.match(status.payload, /<h1>Acme Cloud status<\/h1>/);
  });
});
