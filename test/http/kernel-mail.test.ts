import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';
import { fakeSmtp } from '../helpers/smtp-sink.js';
import { collectJobs } from '../../src/app.js';
import { Mailer } from '../../src/lib/mailer.js';

describe('mailer over SMTP', () => {
  const smtp = fakeSmtp();
  let t: TestApp;
  before(async () => {
    const port = await smtp.listen();
    t = await createTestApp({ env: { GANTRY_SMTP_URL: `smtp://127.0.0.1:${port}` } });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  const outbox = (to: string) =>
    t.app.kernel.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', to).execute();

  it('delivers a queued mail over SMTP and marks it sent (the outbox keeps it)', async () => {
    const user = await makeUser(t.app);
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: user.email } });
    assert.equal(res.statusCode, 202);
    await t.app.kernel.mailer.deliverPending();
    const [row] = await outbox(user.email);
    assert.notEqual(row.sent_at, null);
    assert.equal(row.attempts, 1);
    const mail = smtp.received.find((m) => m.to.some((r) => r.includes(user.email)));
    assert.ok(mail, 'the fake server got the message');
    const code = /code is (\d{6})/.exec(row.body_text)![1];
    assert.match(mail.data, new RegExp(code));
    assert.match(mail.data, /Subject: Your Gantry password reset code/);
  });

  it('a refused delivery stays queued with the reason; the retry job sends it later; nothing is sent twice', async () => {
    smtp.state.refuse = true;
    const user = await makeUser(t.app);
    await t.inject({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email: user.email } });
    await t.app.kernel.mailer.deliverPending();
    let [row] = await outbox(user.email);
    assert.equal(row.sent_at, null);
    // The route started a delivery in the background too; each pass is one counted attempt.
    const failedAttempts = row.attempts;
    assert.ok(failedAttempts >= 1);
    assert.match(String(row.last_error), /451/);
    const warned = t.logs.find((l) => l.includes('mail delivery failed'));
    assert.ok(warned);
    assert.doesNotMatch(warned, /token=/);

    smtp.state.refuse = false;
    const job = collectJobs(t.app).find((j) => j.name === 'kernel.mail-delivery')!;
    await job.run(new Date());
    [row] = await outbox(user.email);
    assert.notEqual(row.sent_at, null);
    assert.equal(row.attempts, failedAttempts + 1);
    const before = smtp.received.length;
    await Promise.all([
      t.app.kernel.mailer.deliverPending(),
      t.app.kernel.mailer.deliverPending(),
      job.run(new Date()),
    ]);
    assert.equal(smtp.received.length, before);
  });

  it('a lease: a mail another node is sending is left alone until its lease runs out, and two mailers send each mail once', async () => {
    const user = await makeUser(t.app);
    await t.app.kernel.mailer.enqueue(t.app.kernel.db, { to: user.email, subject: 'leased', text: 'x', kind: 'test' });
    const future = new Date(Date.now() + 60_000).toISOString();
    await t.app.kernel.db
      .updateTable('mail_outbox')
      .set({ claimed_until: future })
      .where('to_address', '=', user.email)
      .execute();
    await t.app.kernel.mailer.deliverPending();
    let [row] = await outbox(user.email);
    assert.equal(row.sent_at, null, 'another node holds the lease');
    assert.equal(row.attempts, 0);
    // That node died mid-send: once the lease has run out, the mail is taken over.
    const past = new Date(Date.now() - 1_000).toISOString();
    await t.app.kernel.db
      .updateTable('mail_outbox')
      .set({ claimed_until: past })
      .where('to_address', '=', user.email)
      .execute();
    await t.app.kernel.mailer.deliverPending();
    [row] = await outbox(user.email);
    assert.notEqual(row.sent_at, null);
    assert.equal(row.attempts, 1);

    // Two mailers (as on two nodes) delivering the same pending mails at once: each goes out once.
    const { kernel } = t.app;
    const other = new Mailer(kernel.db, kernel.config.smtpUrl, kernel.clock, kernel.logger);
    const emails = await Promise.all(Array.from({ length: 6 }, async () => (await makeUser(t.app)).email));
    for (const to of emails) await kernel.mailer.enqueue(kernel.db, { to, subject: 'once', text: 'x', kind: 'test' });
    await Promise.all([kernel.mailer.deliverPending(), other.deliverPending()]);
    await other.close();
    for (const to of emails) {
      const got = smtp.received.filter((m) => m.to.some((r) => r.includes(to)) && /Subject: once/.test(m.data));
      assert.equal(got.length, 1, `${to} sent once`);
    }
  });

  it('extra headers go out with the mail (RFC 8058 List-Unsubscribe); one that could forge or split a header is refused', async () => {
    const { kernel } = t.app;
    const to = `headers-${Date.now()}@example.com`;
    const headers = {
      'List-Unsubscribe': '<https://status.example/status/unsubscribe?token=abc.def>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    };
    await kernel.mailer.enqueue(kernel.db, { to, subject: 'with headers', text: 'x', kind: 'test', headers });
    await kernel.mailer.deliverPending();
    const mail = smtp.received.find((m) => m.to.some((r) => r.includes(to)));
    assert.ok(mail);
    const head = mail.data.split('\r\n\r\n')[0].replace(/\r\n[ \t]+/g, ' ');
    assert.match(head, /^List-Unsubscribe: <https:\/\/status\.example\/status\/unsubscribe\?token=abc\.def>$/m);
    assert.match(head, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    const [listed] = (await kernel.mailer.list(50)).filter((m) => m.to === to);
    assert.deepEqual(listed.headers, headers);
    for (const bad of [
      { Bcc: 'someone@example.com' },
      { 'X-Note': 'a\r\nBcc: someone@example.com' },
      { 'X Note': 'a' },
    ] as Array<Record<string, string>>)
      await assert.rejects(
        kernel.mailer.enqueue(kernel.db, { to, subject: 'bad', text: 'x', kind: 'test', headers: bad }),
        /cannot be set|must be one line/,
      );
    assert.equal((await outbox(to)).length, 1, 'nothing refused was queued');
  });

  it('a run drains more than one batch while every mail goes out; forgetting an address deletes its mails of those kinds', async () => {
    const { kernel } = t.app;
    const tag = Date.now();
    const count = await kernel.mailer.enqueueMany(
      kernel.db,
      Array.from({ length: 120 }, (_, i) => ({
        to: `bulk-${tag}-${i}@example.com`,
        subject: `bulk ${tag}`,
        text: 'x',
        kind: 'bulk',
      })),
    );
    assert.equal(count, 120);
    await kernel.mailer.deliverPending();
    const unsent = await kernel.db
      .selectFrom('mail_outbox')
      .select('id')
      .where('subject', '=', `bulk ${tag}`)
      .where('sent_at', 'is', null)
      .execute();
    assert.equal(unsent.length, 0, 'one run sent all 120 (three batches)');
    const to = `bulk-${tag}-0@example.com`;
    await kernel.mailer.enqueue(kernel.db, { to, subject: 'other', text: 'x', kind: 'other' });
    assert.equal(await kernel.mailer.forget(kernel.db, to, ['bulk']), 1);
    assert.deepEqual(
      (await outbox(to)).map((m) => m.kind),
      ['other'],
    );
  });

  it('gives up after the maximum attempts', async () => {
    smtp.state.refuse = true;
    const user = await makeUser(t.app);
    await t.inject({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email: user.email } });
    for (let i = 0; i < 4; i++) await t.app.kernel.mailer.deliverPending(3);
    const [row] = await outbox(user.email);
    assert.equal(row.attempts, 3);
    assert.equal(row.sent_at, null);
    smtp.state.refuse = false;
  });
});

describe('mailer without SMTP', () => {
  let t: TestApp;
  before(async () => (t = await createTestApp()));
  after(() => t.close());

  it('keeps mail in the outbox only, listed newest first', async () => {
    assert.equal(t.app.kernel.mailer.smtpEnabled, false);
    const a = await makeUser(t.app);
    await t.inject({ method: 'POST', url: '/api/v1/auth/magic-link', payload: { email: a.email } });
    assert.equal(await t.app.kernel.mailer.deliverPending(), 0);
    const [latest] = await t.app.kernel.mailer.list(1);
    assert.equal(latest.to, a.email);
    assert.equal(latest.kind, 'magic_link');
    assert.equal(latest.sentAt, null);
  });
});
