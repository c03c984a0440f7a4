import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import {
  AUTHORIZE,
  authorizeQuery,
  cookieHeader,
  cookiesFrom,
  form,
  FORM_HEADERS,
  hiddenInput,
  makeClient,
  pkcePair,
  REDIRECT,
  signIn,
} from '../helpers/oauth.js';

/** The value of a hidden input inside the form with this id. */
const formInput = (html: string, formId: string, name: string) => {
  const start = html.indexOf(`<form id="${formId}"`);
  return start < 0 ? null : hiddenInput(html.slice(start, html.indexOf('</form>', start)), name);
};

describe('consent: the redirect host and "Not you? Sign out"', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  async function consentFor(email?: string) {
    const user = await makeUser(t.app, email ? { email } : {});
    const client = await makeClient(t, { name: 'Acme Reports', type: 'public' });
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const { cookies } = await signIn(t, url, user.email, user.password);
    const consent = await t.inject({ url, headers: { cookie: cookieHeader(cookies) } });
    assert.equal(consent.statusCode, 200);
    return { user, url, cookies, consent };
  }

  it('names the signed-in user and the host the answer goes to, for an operator-registered client too', async () => {
    const { user, consent } = await consentFor();
    assert.match(consent.payload, new RegExp(`Signed in as <strong>${user.email.replace(/\./g, '\\.')}</strong>`));
    assert.match(
      consent.payload,
      new RegExp(`You will be sent back to <strong>${new URL(REDIRECT).host.replace(/\./g, '\\.')}</strong>`),
    );
    assert.doesNotMatch(consent.payload, /unverified/, 'registered by the operator: not marked unverified');
    assert.match(
      consent.payload,
      /<button class="btn-link" type="submit" form="signout" name="action" value="signout">Not you\? Sign out<\/button>/,
    );
    // The consent form comes first: its CSRF value is the first in the document.
    assert.notEqual(hiddenInput(consent.payload, 'csrf'), formInput(consent.payload, 'signout', 'csrf'));
  });

  it('signing out ends the browser session and its identity session, then shows the same request signed out', async () => {
    const { url, cookies, consent } = await consentFor();
    const sessionCookie = cookies.gantry_session;
    const row = await t.app.kernel.db
      .selectFrom('oauth_browser_sessions')
      .select('session_id')
      .where('id_hash', '=', sha256Hex(sessionCookie))
      .executeTakeFirstOrThrow();
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        action: 'signout',
        csrf: formInput(consent.payload, 'signout', 'csrf')!,
        request_state: formInput(consent.payload, 'signout', 'request_state')!,
      }),
    });
    assert.equal(res.statusCode, 303);
    const back = new URL(res.headers.location as string, 'http://x');
    const asked = new URL(url, 'http://x');
    assert.equal(back.pathname, asked.pathname);
    assert.deepEqual(
      Object.fromEntries([...back.searchParams].sort()),
      Object.fromEntries([...asked.searchParams].sort()),
      'the same authorization request',
    );
    const cleared = cookiesFrom(res.headers['set-cookie'] as string[] | string);
    assert.equal(cleared.gantry_session, '');
    assert.match(String(res.headers['set-cookie']), /gantry_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);

    // The old cookie is worth nothing now: the request shows the sign-in form again.
    const again = await t.inject({ url, headers: { cookie: `gantry_session=${sessionCookie}` } });
    assert.equal(again.statusCode, 200);
    assert.match(again.payload, /name="password"/);
    assert.equal(await t.app.services.identity.browserSessions.userOf(sessionCookie), null);
    assert.equal(await t.app.services.identity.sessions.isActive(row.session_id), false);
  });

  it('refuses a sign-out without the session-bound CSRF value, and the session stays', async () => {
    const { cookies, consent } = await consentFor();
    for (const csrf of ['', hiddenInput(consent.payload, 'csrf')!]) {
      const res = await t.inject({
        method: 'POST',
        url: AUTHORIZE,
        headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
        payload: form({
          action: 'signout',
          csrf,
          request_state: formInput(consent.payload, 'signout', 'request_state')!,
        }),
      });
      assert.equal(res.statusCode, 403, 'the consent value is not the sign-out value either');
      assert.match(res.payload, /This form cannot be accepted/);
      assert.equal(res.headers['set-cookie'], undefined);
    }
    assert.ok(await t.app.services.identity.browserSessions.userOf(cookies.gantry_session));
  });

  it('a sign-out with no live session just goes back to the sign-in form of the request', async () => {
    const { url, consent } = await consentFor();
    const res = await t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: FORM_HEADERS,
      payload: form({ action: 'signout', request_state: formInput(consent.payload, 'signout', 'request_state')! }),
    });
    assert.equal(res.statusCode, 303);
    assert.equal(
      new URL(res.headers.location as string, 'http://x').searchParams.get('client_id'),
      new URL(url, 'http://x').searchParams.get('client_id'),
    );
  });
});
