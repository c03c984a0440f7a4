import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, insertionOrder, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { form, FORM_HEADERS } from '../helpers/oauth.js';

/**
 * The pages the sign-in mails lead to end somewhere (docs/kernel.md, Pages: no dead ends), and
 * say what is true: a wrong reset code still works, a used confirmation link can be replaced on
 * the spot.
 */
describe('identity pages: a next step on every final page, and true words', () => {
  let t: TestApp;
  let ip = 1;
  before(async () => (t = await createTestApp({ env: { GANTRY_BRAND_NAME: 'Northwind Cloud' } })));
  after(() => t.close());

  // Each call its own client address: the pages spend per-address budgets.
  const post = (url: string, data: Record<string, string>, remoteAddress = `10.62.0.${ip++}`) =>
    t.inject({ method: 'POST', url, headers: FORM_HEADERS, payload: form(data), remoteAddress });
  const mails = (to: string, kind: string) =>
    t.app.kernel.db
      .selectFrom('mail_outbox')
      .select(['subject', 'body_text'])
      .where('to_address', '=', to)
      .where('kind', '=', kind)
      .orderBy(insertionOrder(), 'desc')
      .execute();
  const tokenIn = (text: string) => decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(text)![1]);
  const links = (html: string) =>
    [...html.matchAll(/<a class="btn btn-\w+" href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[1], m[2]]);

  it('confirming an email: the brand on the page, "Email confirmed" leading on, a used link offering a new one', async () => {
    const address = `confirm-${Date.now()}@example.test`;
    const registered = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: address, password: 'a good password' },
    });
    assert.equal(registered.statusCode, 201);
    const token = tokenIn((await mails(address, 'email_confirmation'))[0].body_text);
    const shown = await t.inject(`/auth/confirm-email?token=${encodeURIComponent(token)}`);
    assert.match(shown.payload, /for the Northwind Cloud account that was registered with it/);
    assert.doesNotMatch(shown.payload, /Gantry/);

    const done = await post('/auth/confirm-email', { token });
    assert.equal(done.statusCode, 200);
    assert.match(done.payload, /<title>Email confirmed · Northwind Cloud<\/title>/);
    assert.match(done.payload, /<h1>Email confirmed<\/h1>/);
    assert.deepEqual(links(done.payload), [
      ['/account', 'Continue to your account'],
      ['/', 'Go to the home page'],
    ]);

    const used = await post('/auth/confirm-email', { token });
    assert.equal(used.statusCode, 410);
    assert.match(used.payload, /<h1>This link cannot be used<\/h1>/);
    assert.match(
      used.payload,
      /role="alert" tabindex="-1" autofocus>This confirmation link is invalid, already used or expired\./,
    );
    assert.doesNotMatch(used.payload, /ask for a new one/i);
    assert.match(used.payload, /<form method="post" action="\/auth\/confirm-email\/resend">/);
    assert.match(used.payload, /<a href="\/account">Sign in to your account<\/a>/);
    // An incomplete link offers the same form.
    const incomplete = await t.inject('/auth/confirm-email');
    assert.equal(incomplete.statusCode, 400);
    assert.match(incomplete.payload, /action="\/auth\/confirm-email\/resend"/);
  });

  it('the resend page mails a new link to an unconfirmed address, answers the same for any other, on the API budget', async () => {
    const address = `resend-${Date.now()}@example.test`;
    await t.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: address, password: 'a good password' },
    });
    const before = (await mails(address, 'email_confirmation')).length;
    const page = await t.inject('/auth/confirm-email/resend');
    assert.equal(page.statusCode, 200);
    assert.match(
      page.payload,
      /<input id="email" name="email" type="email" required value="" autocomplete="username" autofocus>/,
    );
    const sent = await post('/auth/confirm-email/resend', { email: address.toUpperCase() });
    assert.equal(sent.statusCode, 202);
    assert.match(sent.payload, /If this address has an account waiting for confirmation, a new link is on its way/);
    assert.deepEqual(links(sent.payload), [['/', 'Go to the home page']]);
    const after = await mails(address, 'email_confirmation');
    assert.equal(after.length, before + 1);
    // The new link works; the old one was replaced.
    assert.equal((await post('/auth/confirm-email', { token: tokenIn(after[0].body_text) })).statusCode, 200);

    const unknown = await post('/auth/confirm-email/resend', { email: 'nobody-at-all@example.test' });
    assert.equal(unknown.statusCode, 202);
    assert.equal(unknown.payload.replace(/<code>[^<]*<\/code>/g, ''), sent.payload.replace(/<code>[^<]*<\/code>/g, ''));
    assert.deepEqual(await mails('nobody-at-all@example.test', 'email_confirmation'), []);
    assert.equal((await post('/auth/confirm-email/resend', { email: 'not an email' })).statusCode, 400);

    // One budget with POST /api/v1/auth/resend-confirmation (5 per 5 minutes), whatever the door.
    const remoteAddress = '10.62.1.1';
    for (let i = 0; i < 5; i++)
      assert.equal(
        (
          await t.inject({
            method: 'POST',
            url: '/api/v1/auth/resend-confirmation',
            payload: { email: address },
            remoteAddress,
          })
        ).statusCode,
        202,
      );
    const refused = await post('/auth/confirm-email/resend', { email: address }, remoteAddress);
    assert.equal(refused.statusCode, 429);
    assert.match(refused.payload, /Too many attempts\. Wait \d+ (seconds?|minutes?), then try again\./);
    assert.ok(Number(refused.headers['retry-after']) > 0);
  });

  it('a wrong reset code: says it may still work, keeps email and code (never the password), offers a new code; the code then works', async () => {
    const user = await makeUser(t.app);
    assert.equal((await post('/auth/forgot-password', { email: user.email })).statusCode, 202);
    const [mail] = await mails(user.email, 'password_recovery');
    assert.match(mail.subject, /^Your Northwind Cloud password reset code$/);
    const code = /code is (\d{6})/.exec(mail.body_text)![1];
    const wrongCode = code === '000000' ? '111111' : '000000';

    const wrong = await post('/auth/reset-password', {
      email: user.email,
      code: wrongCode,
      password: 'the new password',
    });
    assert.equal(wrong.statusCode, 410);
    assert.match(
      wrong.payload,
      /This code does not match the one we sent\. Check the six digits in the newest mail and try again\./,
    );
    assert.doesNotMatch(wrong.payload, /ask for a new one/i);
    assert.match(wrong.payload, /role="alert" tabindex="-1" autofocus>/);
    assert.ok(wrong.payload.includes(`name="email" type="email" required value="${user.email}"`));
    assert.ok(
      wrong.payload.includes(`name="code" inputmode="numeric" pattern="[0-9]{6}" required value="${wrongCode}"`),
    );
    assert.doesNotMatch(wrong.payload, /the new password/);
    assert.match(
      wrong.payload,
      /<form method="post" action="\/auth\/forgot-password">\n<input type="hidden" name="email" value="[^"]+">/,
    );
    assert.match(wrong.payload, /<button class="btn-link" type="submit">Send a new code<\/button>/);

    // What the page said is true: the same code still works.
    const done = await post('/auth/reset-password', { email: user.email, code, password: 'the new password' });
    assert.equal(done.statusCode, 200, done.payload);
    assert.match(done.payload, /<h1>Password changed<\/h1>/);
    // From the mail (no page to return to): it still leads somewhere.
    assert.deepEqual(links(done.payload), [
      ['/account', 'Sign in to your account'],
      ['/', 'Go to the home page'],
    ]);
    const [changed] = await mails(user.email, 'password_changed');
    assert.equal(changed.subject, 'Your Northwind Cloud password was changed');
  });

  it('"Forgot your password?" from any page returns to that page; never to another origin or a link that spends a secret', async () => {
    const user = await makeUser(t.app);
    const back = '/approvals/0b9e1c1e-2f6a-4d43-9a55-0f4f5d1d3c11';
    await post('/auth/forgot-password', { email: user.email, return_to: back });
    const code = /code is (\d{6})/.exec((await mails(user.email, 'password_recovery'))[0].body_text)![1];
    const done = await post('/auth/reset-password', {
      email: user.email,
      code,
      password: 'the new password',
      return_to: back,
    });
    assert.deepEqual(links(done.payload), [[back, 'Continue signing in']]);
    for (const to of [
      'https://evil.example/x',
      '//evil.example/x',
      '/\\evil.example',
      '/auth/magic?token=someone-elses-link',
      '/x/../auth/magic?token=t',
      '/x/%2e%2e/auth/magic?token=t',
      '/api/v1/auth/me',
      '/approvals/x y',
    ]) {
      const page = await t.inject(`/auth/forgot-password?${new URLSearchParams({ return_to: to })}`);
      assert.doesNotMatch(page.payload, /return_to|Back to sign in/, to);
    }
    const kept = await t.inject(`/auth/forgot-password?${new URLSearchParams({ return_to: back })}`);
    assert.ok(kept.payload.includes(`<a class="btn btn-secondary" href="${back}">Back to sign in</a>`));
  });

  it('the API says the same of a wrong code: it may be mistyped, with the rule, not "ask for a new one"', async () => {
    const user = await makeUser(t.app);
    await t.inject({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: user.email } });
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/auth/exchange-recovery-code',
      payload: { email: user.email, code: '123456' },
    });
    assert.equal(res.statusCode, 410);
    const body = JSON.parse(res.payload);
    assert.equal(body.error.code, 'GONE');
    assert.match(body.error.message, /does not match.*after 5 wrong tries/);
    assert.doesNotMatch(body.error.message, /ask for a new one/);
  });
});
