import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
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
} from '../helpers/oauth.js';

/** The authorize page is another door to sign-in: it spends the same budgets as the API. */
describe('sign-in on the authorize page shares the login and magic-link limits', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  async function submit(extra: Record<string, string>) {
    const client = await makeClient(t);
    const page = await t.inject(authorizeQuery(client.clientId, pkcePair().challenge));
    const cookies = cookiesFrom(page.headers['set-cookie'] as string[] | string | undefined);
    return t.inject({
      method: 'POST',
      url: AUTHORIZE,
      headers: { ...FORM_HEADERS, cookie: cookieHeader(cookies) },
      payload: form({
        csrf: hiddenInput(page.payload, 'csrf')!,
        request_state: hiddenInput(page.payload, 'request_state')!,
        ...extra,
      }),
    });
  }

  test('after 8 login attempts on the API, the page refuses a password too (and the reverse holds)', async () => {
    const user = await makeUser(t.app);
    for (let i = 0; i < 8; i++) {
      const res = await t.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: user.email, password: 'wrong password!' },
      });
      assert.equal(res.statusCode, 401);
    }
    const page = await submit({ email: user.email, password: user.password });
    assert.equal(page.statusCode, 429);
    assert.match(page.payload, /Too many attempts/);
    assert.doesNotMatch(String(page.headers['set-cookie'] ?? ''), /gantry_session=/);
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email: user.email, password: user.password },
        })
      ).statusCode,
      429,
    );
  });

  test('magic links sent from the page count against the 5 per 5 minutes of POST /auth/magic-link', async () => {
    const user = await makeUser(t.app);
    for (let i = 0; i < 5; i++)
      assert.equal((await submit({ email: user.email, action: 'magic_link' })).statusCode, 200);
    const sixth = await submit({ email: user.email, action: 'magic_link' });
    assert.equal(sixth.statusCode, 429);
    assert.equal(
      (await t.inject({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email: user.email } })).statusCode,
      429,
    );
    const mails = (await t.app.kernel.mailer.list(50)).filter((m) => m.to === user.email && m.kind === 'magic_link');
    assert.equal(mails.length, 5);
  });
});
