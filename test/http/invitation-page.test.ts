import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, insertionOrder, type TestApp } from '../helpers/app.js';
import { makeTeam, makeUser, TEST_PASSWORD } from '../helpers/factories.js';
import { call, lastAudit } from '../helpers/accounts.js';
import { invitationBrowser } from '../helpers/invitation-page.js';
import { cookieHeader, hiddenInput } from '../helpers/oauth.js';

let n = 0;
const address = (tag: string) => `${tag}-${Date.now().toString(36)}-${n++}@example.test`;

/**
 * The invitation page (docs/accounts.md, Invitation: the page): it names the account, the
 * inviter and the role once the link checks out; it signs in (keeping the form after a wrong
 * password), registers the invited address when no user has it, or accepts with one button.
 */
describe('the invitation page', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp({ env: { GANTRY_BRAND_NAME: 'Northwind Cloud' } })));
  after(() => t.close());

  async function invite(email: string, role = 'viewer') {
    const team = await makeTeam(t.app);
    const inviter = await t.app.services.identity.getUser(team.owner.user.id);
    const res = await call(t, 'POST', `accounts/${team.account.id}/invitations`, team.owner.headers, { email, role });
    assert.equal(res.status, 201);
    const mail = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .select('body_text')
      .where('to_address', '=', email)
      .orderBy(insertionOrder(), 'desc')
      .executeTakeFirstOrThrow();
    const token = decodeURIComponent(/invitations\/accept\?token=([A-Za-z0-9_%-]+)/.exec(mail.body_text)![1]);
    return {
      ...team,
      token,
      invitationId: res.body.data.id as string,
      inviterName: inviter.full_name ?? inviter.email,
    };
  }
  const memberStatus = async (accountId: string, email: string) => {
    const user = await t.app.services.identity.findUserByEmail(email);
    if (!user) return undefined;
    const row = await t.app.kernel.db
      .selectFrom('account_members')
      .select('status')
      .where('account_id', '=', accountId)
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    return row?.status;
  };

  it('names the account, the inviter, the role and the expiry; a known address gets the sign-in form, its email filled in', async () => {
    const email = address('known');
    await makeUser(t.app, { email });
    const inv = await invite(email, 'analyst');
    const page = await invitationBrowser(t, inv.token).open();
    assert.equal(page.statusCode, 200);
    assert.match(page.payload, /<title>Sign in · Northwind Cloud<\/title>/);
    assert.match(page.payload, new RegExp(`<h1>Join ${inv.account.legalName}</h1>`));
    assert.ok(
      page.payload.includes(
        `<strong>${inv.inviterName}</strong> invited you to join <strong>${inv.account.legalName}</strong> on Northwind Cloud as <strong>analyst</strong>`,
      ),
    );
    assert.match(
      page.payload,
      /works until <time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">\d{1,2} [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC<\/time>/,
    );
    assert.ok(page.payload.includes(`value="${email}" required`), 'the email is filled in');
    assert.match(page.payload, /name="password" type="password" autocomplete="current-password" required autofocus>/);
    assert.doesNotMatch(page.payload, /Register with that email first|Gantry/);
    // "Forgot your password?" comes back here.
    const browser = invitationBrowser(t, inv.token);
    assert.ok(page.payload.includes(`/auth/forgot-password?${new URLSearchParams({ return_to: browser.url })}`));
  });

  it('a wrong password keeps the page: the invitation, the email, the error focused; the password is not sent back', async () => {
    const email = address('wrongpw');
    await makeUser(t.app, { email });
    const inv = await invite(email);
    const browser = invitationBrowser(t, inv.token, '10.64.0.1');
    const wrong = await browser.signIn(email, 'not the password at all');
    assert.equal(wrong.statusCode, 401);
    assert.ok(wrong.payload.includes(`invited you to join <strong>${inv.account.legalName}</strong>`));
    assert.match(wrong.payload, /<p class="error" role="alert" tabindex="-1" autofocus>Wrong email or password\.<\/p>/);
    assert.ok(wrong.payload.includes(`value="${email}" required`));
    assert.doesNotMatch(wrong.payload, /not the password at all/);
    assert.match(wrong.payload, /<form method="post" action="\/invitations\/accept\?token=/);
    assert.equal(await memberStatus(inv.account.id, email), 'invited', 'still only held');

    // Signing in as someone else: the page says whose invitation it is, and offers the right sign-in.
    const other = await makeUser(t.app);
    const elsewhere = invitationBrowser(t, inv.token, '10.64.0.2');
    assert.equal((await elsewhere.signIn(other.email, TEST_PASSWORD)).statusCode, 303);
    const note = await elsewhere.open();
    assert.equal(note.statusCode, 200);
    assert.match(
      note.payload,
      new RegExp(`signed in as <strong>${other.email.replace(/\./g, '\\.')}</strong>, but the invitation is for`),
    );
    assert.doesNotMatch(note.payload, /Accept the invitation/);
  });

  it('signed in as the invitee, one button accepts: active member, audited, and where to go next', async () => {
    const email = address('accept');
    const user = await makeUser(t.app, { email });
    const inv = await invite(email, 'billing');
    const browser = invitationBrowser(t, inv.token, '10.64.1.1');
    const signedIn = await browser.signIn(email, TEST_PASSWORD);
    assert.equal(signedIn.statusCode, 303);
    assert.equal(signedIn.headers.location, browser.url);
    const shown = await browser.open();
    assert.match(shown.payload, /<button class="btn btn-primary" type="submit">Accept the invitation<\/button>/);
    // The button's CSRF value is bound to this browser's session: another value is refused, nothing changes.
    const forged = await browser.post({ action: 'accept', csrf: 'forged-value-forged-value' });
    assert.equal(forged.statusCode, 403);
    assert.equal(await memberStatus(inv.account.id, email), 'invited');
    const done = await browser.accept();
    assert.equal(done.statusCode, 200);
    assert.match(done.payload, new RegExp(`<h1>Welcome to ${inv.account.legalName}</h1>`));
    assert.match(done.payload, /You are now a member of <strong>[^<]+<\/strong> as billing\./);
    assert.match(done.payload, /<a class="btn btn-primary" href="\/account">Go to your account<\/a>/);
    assert.match(done.payload, /<a class="btn btn-secondary" href="\/">Go to the home page<\/a>/);
    assert.equal(await memberStatus(inv.account.id, email), 'active');
    assert.equal((await lastAudit(t.app, inv.account.id, 'invitation.accepted')).targetId, inv.invitationId);
    assert.equal((await lastAudit(t.app, inv.account.id, 'member.joined')).actorId, user.id);
    // Used: the link says so, and where to go.
    const used = await browser.open();
    assert.equal(used.statusCode, 410);
    assert.match(used.payload, /<h1>This invitation cannot be used<\/h1>/);
    assert.match(used.payload, /Ask the person who invited you to send it again/);
  });

  it('no user has the address: a registration form; registering confirms it, joins, and signs the browser in', async () => {
    const email = address('newcomer');
    const inv = await invite(email, 'analyst');
    const browser = invitationBrowser(t, inv.token, '10.64.2.1');
    const page = await browser.open();
    assert.equal(page.statusCode, 200);
    assert.match(page.payload, /Create your Northwind Cloud account to accept\./);
    assert.ok(
      page.payload.includes(`<input id="email" type="email" value="${email}" readonly autocomplete="username">`),
    );
    assert.match(
      page.payload,
      /<input id="full_name" name="full_name" maxlength="180" autocomplete="name" value="" autofocus>/,
    );

    // A short password: the form again, the name kept, the error focused.
    const short = await browser.register('short', 'Ada Lovelace');
    assert.equal(short.statusCode, 400);
    assert.match(short.payload, /role="alert" tabindex="-1" autofocus>The password needs 8 to 128 characters\./);
    assert.match(short.payload, /name="full_name" maxlength="180" autocomplete="name" value="Ada Lovelace"/);
    assert.equal(await t.app.services.identity.findUserByEmail(email), undefined);

    // Without the form's CSRF value (another site posting it), nothing is created.
    const forged = await invitationBrowser(t, inv.token, '10.64.2.2').post({
      action: 'register',
      csrf: 'x',
      password: 'a long enough password',
    });
    assert.equal(forged.statusCode, 403);
    assert.equal(await t.app.services.identity.findUserByEmail(email), undefined);

    const done = await browser.register('a long enough password', 'Ada Lovelace');
    assert.equal(done.statusCode, 200, done.payload);
    assert.match(done.payload, /You are now a member of <strong>[^<]+<\/strong> as analyst\./);
    const user = (await t.app.services.identity.findUserByEmail(email))!;
    assert.equal(user.full_name, 'Ada Lovelace');
    assert.ok(user.email_verified_at, 'the mailed link confirms the address');
    await t.app.services.identity.authenticate(email, 'a long enough password');
    assert.equal(await memberStatus(inv.account.id, email), 'active');
    assert.equal((await lastAudit(t.app, inv.account.id, 'member.joined')).actorId, user.id);
    // The browser is signed in: the home page knows who.
    const home = await t.inject({
      url: '/',
      headers: { accept: 'text/html', cookie: cookieHeader(browser.cookies) },
    });
    assert.match(home.payload, new RegExp(`Signed in as <strong>${email.replace(/\./g, '\\.')}</strong>`));
    assert.equal((await browser.register('a long enough password')).statusCode, 410, 'the link is used');
  });

  it('registering an address that has a user meanwhile is refused (409) and turns into the sign-in form', async () => {
    const email = address('race');
    const inv = await invite(email);
    const browser = invitationBrowser(t, inv.token, '10.64.3.1');
    const registerForm = await browser.open();
    assert.match(registerForm.payload, /Create my account and join/);
    await makeUser(t.app, { email });
    // The form shown before the user existed, posted after: refused, and the page asks to sign in.
    const late = await browser.post({
      action: 'register',
      csrf: hiddenInput(registerForm.payload, 'csrf')!,
      password: 'a long enough password',
    });
    assert.equal(late.statusCode, 409);
    assert.match(
      late.payload,
      /role="alert" tabindex="-1" autofocus>An account with this email exists already: sign in to accept the invitation\./,
    );
    assert.match(late.payload, /name="password" type="password" autocomplete="current-password"/);
    assert.equal((await browser.open()).payload.includes('Create my account and join'), false);
  });

  it('a link that is malformed, incomplete or unknown: a page that says so and leads home', async () => {
    const incomplete = await t.inject('/invitations/accept');
    assert.equal(incomplete.statusCode, 400);
    assert.match(incomplete.payload, /<a class="btn btn-primary" href="\/">Go to the home page<\/a>/);
    const unknown = await t.inject(`/invitations/accept?token=${'y'.repeat(43)}`);
    assert.equal(unknown.statusCode, 410);
    assert.match(unknown.payload, /<h1>This invitation cannot be used<\/h1>/);
    assert.match(unknown.payload, /<a class="btn btn-primary" href="\/">Go to the home page<\/a>/);
    assert.doesNotMatch(unknown.payload, /invited you to join/);
  });
});
