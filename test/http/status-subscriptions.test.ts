import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { createTestApp, storedText, type TestApp } from '../helpers/app.js';
import { withJson } from '../helpers/json-inject.js';
import { SUBSCRIPTION_LIMITS } from '../../src/status/subscriptions.js';

const API = '/api/v1/status/subscriptions';
const FORM = 'application/x-www-form-urlencoded';
let ip = 1;
/** Each caller its own address, so the per-address budget is what a test decides to spend. */
const nextIp = () => `10.34.${(ip >> 8) & 255}.${ip++ & 255}`;
const fresh = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`;

/** The path and query of the first link in `text` that goes to `path` (mails link to the public URL). */
function linkIn(text: string, path: string): string {
  const url = text.match(/https?:\/\/\S+/g)?.find((u) => new URL(u).pathname === path);
  assert.ok(url, `no link to ${path} in:\n${text}`);
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

describe('status subscriptions: asking, confirming, unsubscribing, and the limits on it', () => {
  let t: ReturnType<typeof withJson>;
  let restId: string;
  let vaultDbId: string;

  before(async () => {
    t = withJson(await createTestApp());
    const s = t.app.services.status;
    await s.createService({ slug: 'api', name: 'Public API' });
    await s.createService({ slug: 'vault', name: 'Vault', isPublic: false });
    restId = (await s.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST endpoints' })).id;
    vaultDbId = (await s.createComponent({ serviceSlug: 'vault', slug: 'vault-db', name: 'Vault DB' })).id;
  });
  after(() => t?.close());

  const db = () => t.app.kernel.db;
  const subscribe = (payload: object, remoteAddress = nextIp()) =>
    t.inject({ method: 'POST', url: API, payload, remoteAddress });
  const outboxTo = (to: string) =>
    db().selectFrom('mail_outbox').selectAll().where('to_address', '=', to).orderBy('created_at').execute();
  const rowOf = (email: string) =>
    db().selectFrom('status_subscriptions').selectAll().where('email', '=', email).executeTakeFirst();

  it('an address gets a confirmation mail with the one-click unsubscribe headers, and nothing else yet', async () => {
    const email = fresh('ana');
    const res = await subscribe({ email: email.toUpperCase(), componentIds: [restId] });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json().data, { type: 'email', email });
    const row = await rowOf(email);
    assert.ok(row);
    assert.equal(row.kind, 'email');
    assert.equal(row.confirmed_at, null);
    assert.deepEqual(JSON.parse(String(row.component_ids)), [restId]);
    assert.match(String(row.confirm_token_hash), /^[0-9a-f]{64}$/);
    const mails = await outboxTo(email);
    assert.equal(mails.length, 1);
    assert.equal(mails[0].kind, 'status_confirmation');
    assert.equal(mails[0].subject, 'Confirm your subscription to Gantry status updates');
    const headers = JSON.parse(String(mails[0].headers));
    const unsubscribe = linkIn(mails[0].body_text, '/status/unsubscribe');
    assert.equal(headers['List-Unsubscribe'], `<http://127.0.0.1:8080${unsubscribe}>`);
    assert.equal(headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
    // The mailed secret is kept only as its hash (the mail itself holds it, in the outbox).
    const token = new URL(`http://x${linkIn(mails[0].body_text, '/status/subscriptions/confirm')}`).searchParams.get(
      'token',
    ) as string;
    assert.ok(token.length >= 40);
    assert.ok(!JSON.stringify(row).includes(token), 'the subscription row does not hold the secret');
    assert.equal(row.confirm_token_hash, createHash('sha256').update(token).digest('hex'));
  });

  it('the link shows a button (a scanner opening it confirms nothing); the POST confirms once', async () => {
    const email = fresh('ben');
    await subscribe({ email });
    const link = linkIn((await outboxTo(email))[0].body_text, '/status/subscriptions/confirm');
    const page = await t.inject(link);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<button class="btn btn-primary" type="submit">Confirm the subscription<\/button>/);
    assert.equal((await rowOf(email))?.confirmed_at, null);
    const token = new URL(`http://x${link}`).searchParams.get('token') as string;
    const post = (value: string) =>
      t.inject({
        method: 'POST',
        url: '/status/subscriptions/confirm',
        headers: { 'content-type': FORM },
        payload: new URLSearchParams({ token: value }).toString(),
      });
    const confirmed = await post(token);
    assert.equal(confirmed.statusCode, 303);
    assert.equal(confirmed.headers.location, '/status/subscriptions/confirmed');
    assert.notEqual((await rowOf(email))?.confirmed_at, null);
    assert.equal((await rowOf(email))?.confirm_token_hash, null);
    const page2 = await t.inject('/status/subscriptions/confirmed');
    assert.match(page2.body, /<h1>You are subscribed<\/h1>/);
    const again = await post(token);
    assert.equal(again.statusCode, 410);
    assert.match(again.body, /invalid, already used or expired/);
    // Asking again for a confirmed address answers the same, and mails nothing.
    const res = await subscribe({ email });
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json().data, { type: 'email', email });
    assert.equal((await outboxTo(email)).length, 1);
  });

  it('one address gets at most 3 confirmations a day, whoever asks; the answer never tells', async () => {
    const email = fresh('cleo');
    for (let i = 0; i < 5; i++) {
      const res = await subscribe({ email });
      assert.equal(res.statusCode, 202);
      assert.deepEqual(res.json().data, { type: 'email', email });
    }
    assert.equal((await outboxTo(email)).length, SUBSCRIPTION_LIMITS.confirmationsPerRecipient);
  });

  it('one caller address may ask 10 times an hour, by the API and the form together', async () => {
    const caller = nextIp();
    for (let i = 0; i < 10; i++) assert.equal((await subscribe({ email: fresh('dan') }, caller)).statusCode, 202);
    const refused = await subscribe({ email: fresh('dan') }, caller);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error.code, 'RATE_LIMIT_EXCEEDED');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    const form = await t.inject({ url: '/status/subscribe', remoteAddress: caller });
    const cookie = String(form.headers['set-cookie']).split(';')[0];
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1] as string;
    const victim = fresh('eve');
    const posted = await t.inject({
      method: 'POST',
      url: '/status/subscribe',
      remoteAddress: caller,
      headers: { cookie, 'content-type': FORM },
      payload: new URLSearchParams({ csrf, email: victim, kind: 'email' }).toString(),
    });
    assert.equal(posted.statusCode, 429);
    assert.match(posted.body, /role="alert"[^>]*>Too many subscriptions from here/);
    assert.equal((await outboxTo(victim)).length, 0);
  });

  it('the whole installation sends at most 500 confirmations an hour (a spray over many addresses)', async () => {
    const since = t.app.kernel.clock.now().getTime();
    const sent = await t.app.kernel.mailer.queuedOfKindSince(
      db(),
      'status_confirmation',
      new Date(since - 3_600_000).toISOString(),
    );
    await t.app.kernel.mailer.enqueueMany(
      db(),
      Array.from({ length: SUBSCRIPTION_LIMITS.confirmationsPerHour - sent.count }, (_, i) => ({
        to: `spray-${i}@example.com`,
        subject: 'Confirm',
        text: 'x',
        kind: 'status_confirmation',
      })),
    );
    const email = fresh('fay');
    const res = await subscribe({ email });
    assert.equal(res.statusCode, 429);
    assert.equal(res.json().error.details.quota, 'confirmations');
    assert.ok(Number(res.headers['retry-after']) > 0);
    assert.equal(await rowOf(email), undefined);
    await db().deleteFrom('mail_outbox').where('to_address', 'like', 'spray-%').execute();
  });

  it('refuses a malformed request with the field: no address nor URL, both, a look-alike, unknown or private components', async () => {
    const cases: Array<[object, string]> = [
      [{}, ''],
      [{ email: fresh('g'), webhookUrl: 'https://1.1.1.1/x' }, ''],
      [{ email: 'pаypal@example.com' }, 'email'],
      [{ email: 'not an email' }, 'email'],
      [{ email: fresh('g'), componentIds: ['nope'] }, 'componentIds.0'],
      [{ email: fresh('g'), componentIds: [randomUUID()] }, 'componentIds'],
      [{ email: fresh('g'), componentIds: [vaultDbId] }, 'componentIds'],
      [{ webhookUrl: 'ftp://1.1.1.1/x' }, 'webhookUrl'],
    ];
    for (const [payload, field] of cases) {
      const res = await subscribe(payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json().error.code, 'VALIDATION_FAILED');
      assert.equal(res.json().error.details[0].field, field, JSON.stringify(payload));
    }
    const count = await db().selectFrom('status_subscriptions').select(db().fn.countAll().as('n')).executeTakeFirst();
    assert.ok(Number(count?.n) > 0);
    assert.equal(
      await db().selectFrom('status_subscriptions').selectAll().where('email', 'like', 'g-%').executeTakeFirst(),
      undefined,
    );
  });

  it('a webhook URL goes through the outbound guard: loopback, private and metadata addresses are refused', async () => {
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://10.0.0.5/hook',
      'http://169.254.169.254/latest',
      'http://[::1]/x',
      'http://localhost/x',
    ]) {
      const res = await subscribe({ webhookUrl: url });
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().error.details[0].field, 'webhookUrl', url);
    }
    assert.equal(
      await db().selectFrom('status_subscriptions').selectAll().where('kind', '=', 'webhook').executeTakeFirst(),
      undefined,
    );
  });

  it('a webhook gets its secret once, stored sealed; one host holds at most 10', async () => {
    const res = await subscribe({ webhookUrl: 'https://1.1.1.1/hooks/status', componentIds: [restId] });
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.equal(data.type, 'webhook');
    assert.equal(data.webhookUrl, 'https://1.1.1.1/hooks/status');
    assert.deepEqual(data.componentIds, [restId]);
    assert.match(data.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    const row = await db()
      .selectFrom('status_subscriptions')
      .selectAll()
      .where('id', '=', data.id)
      .executeTakeFirstOrThrow();
    assert.match(String(row.secret_sealed), /^v1\./);
    assert.ok(!(await storedText(t.app)).includes(data.secret), 'the secret is not stored in clear');
    const listed = (await t.app.services.status.listSubscribers()).find((s) => s.id === data.id);
    assert.deepEqual(listed?.components, ['api-rest']);
    assert.doesNotMatch(JSON.stringify(listed), /whsec_/);
    for (let i = 1; i < SUBSCRIPTION_LIMITS.webhooksPerHost; i++)
      assert.equal((await subscribe({ webhookUrl: `https://1.1.1.1/hooks/${i}` })).statusCode, 201);
    const refused = await subscribe({ webhookUrl: 'https://1.1.1.1/hooks/more' });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().error.code, 'CONFLICT');
  });

  it('unsubscribing with one click (RFC 8058) deletes the address and every mail of ours to it', async () => {
    for (const encoding of ['form', 'multipart'] as const) {
      const email = fresh(`una-${encoding}`);
      await subscribe({ email });
      const link = linkIn((await outboxTo(email))[0].body_text, '/status/unsubscribe');
      // What the mail client sends by itself: a POST of List-Unsubscribe=One-Click, no cookie.
      const boundary = 'gantryboundary';
      const res = await t.inject({
        method: 'POST',
        url: link,
        headers: {
          'content-type': encoding === 'form' ? FORM : `multipart/form-data; boundary=${boundary}`,
        },
        payload:
          encoding === 'form'
            ? 'List-Unsubscribe=One-Click'
            : `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.body, /<h1>You are unsubscribed<\/h1>/);
      assert.equal(await rowOf(email), undefined);
      assert.equal((await outboxTo(email)).length, 0, 'its mails are forgotten too');
      // The same link again: nothing left to do, the same answer.
      assert.equal(
        (
          await t.inject({
            method: 'POST',
            url: link,
            headers: { 'content-type': FORM },
            payload: 'List-Unsubscribe=One-Click',
          })
        ).statusCode,
        200,
      );
    }
  });

  it("the unsubscribe page's button, and a damaged or forged link", async () => {
    const email = fresh('ivo');
    await subscribe({ email });
    const link = linkIn((await outboxTo(email))[0].body_text, '/status/unsubscribe');
    const page = await t.inject(link);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<button class="btn btn-primary" type="submit">Unsubscribe<\/button>/);
    assert.ok(await rowOf(email), 'opening the link changes nothing');
    const res = await t.inject({ method: 'POST', url: link, headers: { 'content-type': FORM }, payload: '' });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/status/unsubscribed');
    assert.equal(await rowOf(email), undefined);
    const id = new URL(`http://x${link}`).searchParams.get('token')?.split('.')[0] as string;
    for (const bad of ['', 'garbage', `${id}.${'A'.repeat(43)}`, `${randomUUID()}.${link.split('.').pop()}`]) {
      const get = await t.inject(`/status/unsubscribe?token=${encodeURIComponent(bad)}`);
      assert.equal(get.statusCode, 400, bad);
      const post = await t.inject({
        method: 'POST',
        url: `/status/unsubscribe?token=${encodeURIComponent(bad)}`,
        headers: { 'content-type': FORM },
        payload: 'List-Unsubscribe=One-Click',
      });
      assert.equal(post.statusCode, 400, bad);
      assert.match(post.body, /incomplete or damaged/);
    }
  });

  it('an address never confirmed is deleted with its mail once the link expires; the link then fails', async () => {
    const email = fresh('jo');
    await subscribe({ email });
    const link = linkIn((await outboxTo(email))[0].body_text, '/status/subscriptions/confirm');
    const later = new Date(t.app.kernel.clock.now().getTime() + 49 * 3_600_000);
    const { expired } = await t.app.services.status.expireSubscriptions(later);
    assert.ok(expired >= 1);
    assert.equal(await rowOf(email), undefined);
    assert.equal((await outboxTo(email)).length, 0);
    const token = new URL(`http://x${link}`).searchParams.get('token') as string;
    const res = await t.inject({
      method: 'POST',
      url: '/status/subscriptions/confirm',
      headers: { 'content-type': FORM },
      payload: new URLSearchParams({ token }).toString(),
    });
    assert.equal(res.statusCode, 410);
  });

  it('subscribing changes nothing the status answers show: their ETags stay', async () => {
    const before = await t.inject('/status');
    const api = await t.inject('/api/v1/status');
    await subscribe({ email: fresh('kim') });
    assert.equal((await t.inject('/status')).headers.etag, before.headers.etag);
    assert.equal((await t.inject('/api/v1/status')).headers.etag, api.headers.etag);
  });
});

describe('the subscribe form (no script, PRG, CSRF bound to the browser)', () => {
  let t: TestApp;
  let restId: string;
  before(async () => {
    t = await createTestApp();
    await t.app.services.status.createService({ slug: 'api', name: 'Public API' });
    restId = (await t.app.services.status.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST' })).id;
  });
  after(() => t?.close());

  async function openForm(remoteAddress: string) {
    const res = await t.inject({ url: '/status/subscribe', remoteAddress });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(String(res.headers['content-security-policy']), /form-action 'self'/);
    return {
      cookie: String(res.headers['set-cookie']).split(';')[0],
      csrf: /name="csrf" value="([^"]+)"/.exec(res.payload)?.[1] as string,
      html: res.payload,
    };
  }
  const post = (remoteAddress: string, cookie: string, fields: URLSearchParams) =>
    t.inject({
      method: 'POST',
      url: '/status/subscribe',
      remoteAddress,
      headers: { cookie, 'content-type': FORM },
      payload: fields.toString(),
    });

  it('shows the components to choose, posts, and redirects to "check your inbox"', async () => {
    const caller = nextIp();
    const form = await openForm(caller);
    assert.match(
      form.html,
      /<input type="checkbox" id="c-[^"]+" name="component" value="[^"]+"><label for="c-[^"]+">REST<\/label>/,
    );
    const email = fresh('lea');
    const fields = new URLSearchParams({ csrf: form.csrf, email, kind: 'email' });
    fields.append('component', restId);
    const res = await post(caller, form.cookie, fields);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/status/subscribe/sent');
    const sent = await t.inject('/status/subscribe/sent');
    assert.match(sent.payload, /<h1>Check your inbox<\/h1>/);
    const row = await t.app.kernel.db
      .selectFrom('status_subscriptions')
      .selectAll()
      .where('email', '=', email)
      .executeTakeFirst();
    assert.deepEqual(JSON.parse(String(row?.component_ids)), [restId]);
  });

  it('refuses a form without the CSRF value of this browser, and says what to fix in a bad one', async () => {
    const caller = nextIp();
    const form = await openForm(caller);
    const other = await openForm(nextIp());
    const email = fresh('max');
    for (const [cookie, csrf] of [
      [form.cookie, ''],
      [form.cookie, other.csrf],
      ['', form.csrf],
    ]) {
      const res = await post(caller, cookie, new URLSearchParams({ csrf, email, kind: 'email' }));
      assert.equal(res.statusCode, 403);
      assert.match(res.payload, /role="alert"[^>]* id="form-error">This form has expired/);
    }
    assert.equal(
      await t.app.kernel.db
        .selectFrom('status_subscriptions')
        .selectAll()
        .where('email', '=', email)
        .executeTakeFirst(),
      undefined,
    );
    const bad = await post(caller, form.cookie, new URLSearchParams({ csrf: form.csrf, email: 'nope', kind: 'email' }));
    assert.equal(bad.statusCode, 400);
    assert.match(
      bad.payload,
      /id="email" name="email" type="email" autocomplete="email" value="nope" aria-invalid="true"/,
    );
    const empty = await post(caller, form.cookie, new URLSearchParams({ csrf: form.csrf, kind: 'email' }));
    assert.equal(empty.statusCode, 400);
    assert.match(empty.payload, /Enter your email address\./);
  });

  it('a webhook from the form: its secret shown once, on the answer itself', async () => {
    const caller = nextIp();
    const form = await openForm(caller);
    const res = await post(
      caller,
      form.cookie,
      new URLSearchParams({ csrf: form.csrf, webhookUrl: 'https://1.1.1.1/form-hook', kind: 'webhook' }),
    );
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const secret = /<pre class="arguments" id="secret">(whsec_[^<]+)<\/pre>/.exec(res.payload)?.[1];
    assert.ok(secret);
    const refused = await post(
      caller,
      form.cookie,
      new URLSearchParams({ csrf: form.csrf, webhookUrl: 'http://127.0.0.1/x', kind: 'webhook' }),
    );
    assert.equal(refused.statusCode, 400);
    assert.match(refused.payload, /aria-invalid="true"/);
  });
});

describe('subscriptions on the status listener (anonymous, nothing else there)', () => {
  let t: ReturnType<typeof withJson>;
  before(async () => {
    t = withJson(await createTestApp({ statusOnly: true }));
  });
  after(() => t?.close());

  it('takes subscriptions and serves their pages; the rest of the API is not there', async () => {
    const email = fresh('nia');
    const res = await t.inject({ method: 'POST', url: API, payload: { email }, remoteAddress: nextIp() });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await t.inject('/status/subscribe')).statusCode, 200);
    assert.equal((await t.inject('/status/subscribe/sent')).statusCode, 200);
    const [mail] = await t.app.kernel.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', email)
      .execute();
    assert.equal((await t.inject(linkIn(mail.body_text, '/status/subscriptions/confirm'))).statusCode, 200);
    assert.equal((await t.inject(linkIn(mail.body_text, '/status/unsubscribe'))).statusCode, 200);
    assert.equal((await t.inject({ method: 'POST', url: '/api/v1/auth/login', payload: {} })).statusCode, 404);
  });
});
