import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, insertionOrder, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { authorizeQuery, form, FORM_HEADERS, makeClient, pkcePair } from '../helpers/oauth.js';

const decode = (s: string) => s.replace(/&amp;/g, '&');

describe('"Forgot your password?" from the sign-in page to a new password and back', () => {
  let t: TestApp;
  let address = 1;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  // Each test its own client address: the page spends the forgot-password budget (3 per 5 minutes).
  const post = (url: string, data: Record<string, string>) =>
    t.inject({ method: 'POST', url, headers: FORM_HEADERS, payload: form(data), remoteAddress: `10.9.0.${address++}` });
  const mailTo = async (to: string) =>
    (
      await t.app.kernel.db
        .selectFrom('mail_outbox')
        .select('body_text')
        .where('to_address', '=', to)
        .orderBy(insertionOrder(), 'desc')
        .execute()
    )[0]?.body_text;

  it('the sign-in page links to the reset page, carrying the authorization request to return to', async () => {
    const client = await makeClient(t);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const signIn = await t.inject(url);
    const href = /<a href="([^"]+)">Forgot your password\?<\/a>/.exec(signIn.payload)?.[1];
    assert.ok(href, 'a "Forgot your password?" link');
    const link = new URL(decode(href), 'http://x');
    assert.equal(link.pathname, '/auth/forgot-password');
    assert.equal(link.searchParams.get('return_to'), url);
    const page = await t.inject(decode(href));
    assert.equal(page.statusCode, 200);
    assert.match(page.payload, /<label for="email">Email<\/label><input id="email" name="email" type="email" required/);
    assert.ok(
      page.payload.includes(`<a class="btn btn-secondary" href="${url.replace(/&/g, '&amp;')}">Back to sign in</a>`),
    );
  });

  it('mails a code, sets the new password with it, and offers to continue the sign-in', async () => {
    const user = await makeUser(t.app);
    const client = await makeClient(t);
    const url = authorizeQuery(client.clientId, pkcePair().challenge);
    const sent = await post('/auth/forgot-password', { email: user.email.toUpperCase(), return_to: url });
    assert.equal(sent.statusCode, 202);
    assert.match(sent.payload, /If an account exists for this email, a six-digit code is on its way/);
    assert.match(sent.payload, /<form method="post" action="\/auth\/reset-password">/);
    assert.ok(sent.payload.includes(`name="return_to" value="${url.replace(/&/g, '&amp;')}"`));
    const code = /code is (\d{6})/.exec((await mailTo(user.email))!)![1];

    const done = await post('/auth/reset-password', {
      email: user.email,
      code,
      password: 'a brand new password',
      return_to: url,
    });
    assert.equal(done.statusCode, 200, done.payload);
    assert.match(done.payload, /Your password is changed/);
    assert.ok(
      done.payload.includes(`<a class="btn btn-primary" href="${url.replace(/&/g, '&amp;')}">Continue signing in</a>`),
    );
    await t.app.services.identity.authenticate(user.email, 'a brand new password');
  });

  it('an unknown email gets the same answer and no mail', async () => {
    const sent = await post('/auth/forgot-password', { email: 'nobody-here@example.test' });
    assert.equal(sent.statusCode, 202);
    assert.match(sent.payload, /If an account exists for this email/);
    assert.equal(await mailTo('nobody-here@example.test'), undefined);
  });

  it('a malformed email is a 400 page with the form again; a return_to elsewhere is dropped', async () => {
    const bad = await post('/auth/forgot-password', { email: 'not an email' });
    assert.equal(bad.statusCode, 400);
    assert.match(
      bad.payload,
      /<p class="error" role="alert" tabindex="-1" autofocus>Enter the email of your account\.<\/p>/,
    );
    for (const to of [
      'https://evil.example/api/v1/oauth/authorize?x=1',
      '/api/v1/oauth/authorize\\@evil',
      '//evil.example',
    ]) {
      const page = await t.inject(`/auth/forgot-password?${new URLSearchParams({ return_to: to })}`);
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.payload, /return_to|Back to sign in|evil/, to);
    }
  });

  it('the page spends the budget of POST /api/v1/auth/forgot-password: one budget, whatever the door', async () => {
    const user = await makeUser(t.app);
    const remoteAddress = '10.9.1.1';
    for (let i = 0; i < 2; i++) {
      const api = await t.inject({
        method: 'POST',
        url: '/api/v1/auth/forgot-password',
        payload: { email: user.email },
        remoteAddress,
      });
      assert.equal(api.statusCode, 202);
    }
    const page = () =>
      t.inject({
        method: 'POST',
        url: '/auth/forgot-password',
        headers: FORM_HEADERS,
        payload: form({ email: user.email }),
        remoteAddress,
      });
    assert.equal((await page()).statusCode, 202);
    const refused = await page();
    assert.equal(refused.statusCode, 429);
    assert.match(refused.payload, /Too many attempts/);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(refused.headers['x-ratelimit-remaining'], '0');
  });
});
