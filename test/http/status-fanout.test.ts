import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestApp, insertionOrder, type TestApp } from '../helpers/app.js';
import { fakeSmtp, headerOf, textOf } from '../helpers/smtp-sink.js';
import { verifySignature, webhookReceiver, type ReceivedHook } from '../helpers/webhook-receiver.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createStatusService } from '../../src/status/service.js';

const H = 3_600_000;

/** What a receiver reads of a webhook body (docs/status.md, Webhooks). */
interface HookBody {
  type: string;
  incident?: { updates: Array<{ status: string }>; resolved_at: string | null };
  maintenance?: { service: { slug: string }; description: string | null };
}

/**
 * Subscribers are told (docs/status.md, Subscriptions): the publish call only records an event;
 * the fan-out job turns it into mails (through the outbox, over SMTP) and signed webhook
 * deliveries, each to those who follow what it concerns; failing webhooks are retried for a
 * day, then disabled.
 */
describe('status events reach subscribers by mail and signed webhooks', () => {
  let t: TestApp;
  const smtp = fakeSmtp();
  const hooks = webhookReceiver();
  const clock = new ManualClock('2026-06-01T00:00:00.000Z');
  const secrets = new Map<string, string>();
  const hookIds = new Map<string, string>();
  let anaEmail: string;
  let benEmail: string;
  let incidentId: string;

  const status = () => t.app.services.status;
  const db = () => t.app.kernel.db;
  const notices = (to: string) =>
    db()
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', to)
      .where('kind', '=', 'status_notice')
      .orderBy('created_at')
      .orderBy(insertionOrder())
      .execute();
  const bodies = (path: string) => hooks.at(path).map((h) => JSON.parse(h.body) as HookBody);
  const deliveriesOf = (path: string) =>
    db()
      .selectFrom('status_webhook_deliveries')
      .selectAll()
      .where('subscription_id', '=', hookIds.get(path) as string)
      .orderBy('created_at')
      .execute();
  const subscriptionOf = (path: string) =>
    db()
      .selectFrom('status_subscriptions')
      .selectAll()
      .where('id', '=', hookIds.get(path) as string)
      .executeTakeFirstOrThrow();

  async function confirmedEmail(name: string, componentIds?: string[]) {
    const email = `${name}-${randomUUID().slice(0, 6)}@example.com`;
    await status().subscribe({ email, componentIds });
    const [mail] = await db().selectFrom('mail_outbox').selectAll().where('to_address', '=', email).execute();
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail.body_text.slice(mail.body_text.indexOf('/confirm')))?.[1];
    await status().confirmSubscription(token as string);
    return email;
  }

  async function webhook(path: string, componentIds?: string[]) {
    const res = await status().subscribe({ webhookUrl: hooks.url(path), componentIds });
    assert.equal(res.type, 'webhook');
    if (res.type === 'webhook') {
      secrets.set(path, res.secret);
      hookIds.set(path, res.id);
    }
  }

  /** Fan-out and webhook deliveries as the jobs run them, then the mail of the outbox over SMTP. */
  async function runJobs() {
    const fanned = await status().fanOut();
    await status().deliverWebhooks(clock.now());
    await t.app.kernel.mailer.deliverPending();
    return fanned;
  }

  before(async () => {
    const port = await smtp.listen();
    await hooks.listen();
    hooks.answer('/hooks/gone', 410);
    hooks.answer('/hooks/down', 500);
    t = await createTestApp({
      clock,
      env: {
        GANTRY_SMTP_URL: `smtp://127.0.0.1:${port}`,
        GANTRY_ALLOW_PRIVATE_NETWORKS: 'true',
        GANTRY_BRAND_NAME: 'Acme Cloud',
      },
    });
    // The jobs are run by hand here; the server's own start-at-once is the last test's.
    await status().deactivateSubscriptions();
    const s = status();
    await s.createService({ slug: 'api', name: 'Public API' });
    await s.createService({ slug: 'dash', name: 'Dashboard' });
    await s.createService({ slug: 'vault', name: 'Vault', isPublic: false });
    const rest = await s.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST endpoints' });
    const ui = await s.createComponent({ serviceSlug: 'dash', slug: 'dash-ui', name: 'Web UI' });
    await s.createComponent({ serviceSlug: 'vault', slug: 'vault-db', name: 'Vault DB' });
    anaEmail = await confirmedEmail('ana');
    benEmail = await confirmedEmail('ben', [ui.id]);
    await s.subscribe({ email: 'never-confirmed@example.com' });
    await webhook('/hooks/all');
    await webhook('/hooks/rest', [rest.id]);
    await webhook('/hooks/gone');
    await webhook('/hooks/down');
    // The confirmation mails are not what this file is about.
    await t.app.kernel.mailer.deliverPending();
    smtp.received.length = 0;
  });
  after(async () => {
    await t?.close();
    await smtp.close();
    await hooks.close();
  });

  it('publishing records one event and sends nothing; the job fans it out to those who follow it', async () => {
    incidentId = (
      await status().createIncident({
        title: 'Elevated API errors',
        impact: 'partial',
        message: 'We are investigating',
        componentSlugs: ['api-rest'],
      })
    ).id;
    const events = await db().selectFrom('status_events').selectAll().execute();
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'incident.created');
    assert.equal(events[0].fanned_out_at, null);
    assert.equal((await notices(anaEmail)).length, 0, 'the publish call mailed nothing');
    assert.equal((await db().selectFrom('status_webhook_deliveries').selectAll().execute()).length, 0);

    const fanned = await status().fanOut();
    assert.deepEqual(fanned, { events: 1, mails: 1, webhooks: 4 });
    const [mail] = await notices(anaEmail);
    assert.equal(mail.subject, '[Acme Cloud] New incident: Elevated API errors');
    assert.match(mail.body_text, /Investigating · impact: Partial outage · affects: REST endpoints \(Public API\)/);
    assert.match(
      mail.body_text,
      new RegExp(`The whole timeline: http://127.0.0.1:8080/status/incidents/${incidentId}`),
    );
    assert.equal((await notices(benEmail)).length, 0, 'ben follows the Web UI only');
    assert.equal((await notices('never-confirmed@example.com')).length, 0);
    assert.notEqual((await db().selectFrom('status_events').selectAll().executeTakeFirstOrThrow()).fanned_out_at, null);
  });

  it('webhooks are POSTed signed as the docs say a subscriber checks; each delivery is recorded', async () => {
    await status().deliverWebhooks(clock.now());
    const now = clock.now().getTime();
    for (const path of ['/hooks/all', '/hooks/rest']) {
      const [hook] = hooks.at(path);
      assert.ok(hook, path);
      assert.equal(verifySignature(hook, secrets.get(path) as string, now), true, path);
      assert.equal(verifySignature(hook, secrets.get('/hooks/gone') as string, now), false, 'another secret fails');
      assert.equal(
        verifySignature({ ...hook, body: hook.body.replace('Elevated', 'Lowered') }, secrets.get(path) as string, now),
        false,
      );
      assert.equal(
        verifySignature(hook, secrets.get(path) as string, now + 10 * 60_000),
        false,
        'an old request fails',
      );
      assert.equal(hook.headers['content-type'], 'application/json');
      assert.equal(hook.headers['x-gantry-event'], 'incident.created');
      const [row] = await deliveriesOf(path);
      assert.equal(hook.headers['x-gantry-delivery'], row.id);
      assert.equal(row.status, 'delivered');
      assert.equal(row.attempts, 1);
      assert.equal(row.last_status_code, 200);
      const body = JSON.parse(hook.body);
      assert.equal(body.type, 'incident.created');
      assert.equal(body.incident.id, incidentId);
      assert.equal(body.incident.status, 'investigating');
      assert.equal(body.incident.url, `http://127.0.0.1:8080/status/incidents/${incidentId}`);
      assert.deepEqual(body.incident.components, [
        {
          id: body.incident.components[0].id,
          slug: 'api-rest',
          name: 'REST endpoints',
          service: { id: body.incident.components[0].service.id, slug: 'api', name: 'Public API' },
        },
      ]);
      assert.deepEqual(body.incident.updates, [
        { status: 'investigating', message: 'We are investigating', created_at: '2026-06-01T00:00:00.000Z' },
      ]);
    }
    // 410 Gone: the receiver asked to stop.
    const [gone] = await deliveriesOf('/hooks/gone');
    assert.equal(gone.status, 'failed');
    assert.equal(gone.last_status_code, 410);
    const goneSub = await subscriptionOf('/hooks/gone');
    assert.equal(goneSub.disabled_reason, 'the endpoint answered 410 Gone');
    // 500: retried later.
    const [down] = await deliveriesOf('/hooks/down');
    assert.equal(down.status, 'pending');
    assert.equal(down.attempts, 1);
    assert.equal(down.last_status_code, 500);
    assert.equal(down.last_error, 'the endpoint answered 500');
    assert.equal(down.next_attempt_at, new Date(now + 30_000).toISOString());
  });

  it('the mail goes out over SMTP with the one-click unsubscribe headers (RFC 8058) and links', async () => {
    await t.app.kernel.mailer.deliverPending();
    const mail = smtp.received.find((m) => m.to.some((r) => r.includes(anaEmail)));
    assert.ok(mail);
    assert.equal(headerOf(mail, 'Subject'), '[Acme Cloud] New incident: Elevated API errors');
    const unsubscribe = headerOf(mail, 'List-Unsubscribe') as string;
    assert.match(
      unsubscribe,
      /^<http:\/\/127\.0\.0\.1:8080\/status\/unsubscribe\?token=[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}>$/,
    );
    assert.equal(headerOf(mail, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
    const text = textOf(mail);
    assert.ok(text.includes(`Unsubscribe with one click: ${unsubscribe.slice(1, -1)}`), text);
    assert.match(text, new RegExp(`The whole timeline: http://127.0.0.1:8080/status/incidents/${incidentId}`));
  });

  it('updates and the resolution follow, as incident.updated and incident.resolved', async () => {
    clock.advance(H);
    await status().updateIncident(incidentId, { status: 'identified', message: 'A bad deploy' });
    clock.advance(H);
    await status().updateIncident(incidentId, { status: 'resolved', message: 'Rolled back' });
    const fanned = await runJobs();
    assert.deepEqual(fanned, { events: 2, mails: 2, webhooks: 6 });
    assert.deepEqual(
      bodies('/hooks/rest').map((b) => b.type),
      ['incident.created', 'incident.updated', 'incident.resolved'],
    );
    const resolved = bodies('/hooks/rest')[2];
    assert.deepEqual(
      resolved.incident?.updates.map((u) => u.status),
      ['resolved', 'identified', 'investigating'],
    );
    assert.equal(resolved.incident?.resolved_at, '2026-06-01T02:00:00.000Z');
    assert.deepEqual(
      (await notices(anaEmail)).map((m) => m.subject),
      [
        '[Acme Cloud] New incident: Elevated API errors',
        '[Acme Cloud] Identified: Elevated API errors',
        '[Acme Cloud] Resolved: Elevated API errors',
      ],
    );
    assert.equal(hooks.at('/hooks/gone').length, 1, 'a disabled webhook gets nothing more');
  });

  it('only what the public page shows, and only to who follows it: private, platform-wide, maintenance', async () => {
    const before = (await db().selectFrom('status_events').selectAll().execute()).length;
    await status().createIncident({ title: 'Vault hiccup', impact: 'major', message: 'x', serviceSlugs: ['vault'] });
    assert.equal((await db().selectFrom('status_events').selectAll().execute()).length, before, 'no event for it');
    await status().createIncident({ title: 'Sign-in slow everywhere', impact: 'minor', message: 'Looking' });
    await runJobs();
    assert.equal(bodies('/hooks/rest').at(-1)?.type, 'incident.created', 'platform-wide: everyone');
    assert.equal((await notices(benEmail)).length, 1);
    assert.equal((await notices(benEmail))[0].subject, '[Acme Cloud] New incident: Sign-in slow everywhere');

    await status().createMaintenance({
      title: 'Database upgrade',
      serviceSlug: 'dash',
      description: 'Read-only for up to 90 minutes.',
      startsAt: new Date(clock.now().getTime() + H).toISOString(),
      endsAt: new Date(clock.now().getTime() + 2 * H).toISOString(),
    });
    clock.advance(H);
    await status().advanceMaintenance(clock.now());
    clock.advance(H);
    await status().advanceMaintenance(clock.now());
    await runJobs();
    assert.deepEqual(
      (await notices(benEmail)).slice(1).map((m) => m.subject),
      ['[Acme Cloud] Maintenance started: Database upgrade', '[Acme Cloud] Maintenance completed: Database upgrade'],
    );
    assert.match((await notices(benEmail))[1].body_text, /Maintenance has started on Dashboard\.\nWindow: /);
    assert.match((await notices(benEmail))[1].body_text, /Read-only for up to 90 minutes\./);
    assert.deepEqual(
      bodies('/hooks/all')
        .slice(-2)
        .map((b) => b.type),
      ['maintenance.started', 'maintenance.completed'],
    );
    const started = bodies('/hooks/all').at(-2);
    assert.equal(started?.maintenance?.service.slug, 'dash');
    assert.equal(started?.maintenance?.description, 'Read-only for up to 90 minutes.');
    assert.ok(!bodies('/hooks/rest').some((b) => b.type.startsWith('maintenance.')), 'the REST follower is not told');
  });

  it('a failing webhook is retried with a growing wait for a day, then disabled', async () => {
    const attemptsAt = () => hooks.at('/hooks/down').length;
    const first = (await deliveriesOf('/hooks/down'))[0];
    const sent = attemptsAt();
    // Not due yet: nothing is sent.
    await status().deliverWebhooks(clock.now());
    const waiting = (await deliveriesOf('/hooks/down')).filter((d) => d.status === 'pending');
    assert.ok(waiting.length >= 4);
    const due = new Date(Math.min(...waiting.map((d) => Date.parse(d.next_attempt_at))));
    clock.set(due);
    await status().deliverWebhooks(clock.now());
    assert.ok(attemptsAt() > sent);
    const again = (await deliveriesOf('/hooks/down')).find((d) => d.id === first.id);
    assert.equal(again?.status, 'pending');
    // A day after the first delivery was made, its next failure gives up on the webhook.
    clock.set(new Date(Date.parse(first.created_at) + 24 * H));
    await status().deliverWebhooks(clock.now());
    const sub = await subscriptionOf('/hooks/down');
    assert.match(String(sub.disabled_reason), /^failed for a day; last: the endpoint answered 500$/);
    const rows = await deliveriesOf('/hooks/down');
    assert.ok(
      rows.every((d) => d.status === 'failed'),
      JSON.stringify(rows.map((d) => d.status)),
    );
    assert.ok(rows.every((d) => d.last_error !== null));
    const listed = (await status().listSubscribers()).find((s) => s.id === sub.id);
    assert.equal(listed?.state, 'disabled');
    assert.equal(listed?.deliveries?.pending, 0);
    assert.equal(listed?.deliveries?.failed, rows.length);
    const count = attemptsAt();
    await status().createIncident({ title: 'After the webhook gave up', impact: 'minor', message: 'x' });
    await runJobs();
    assert.equal(attemptsAt(), count, 'a disabled webhook gets nothing more');
  });

  it("a notice's unsubscribe link works with one click, and the address and its mails are gone", async () => {
    const [mail] = await notices(anaEmail);
    const link = /http:\/\/127\.0\.0\.1:8080(\/status\/unsubscribe\?token=\S+)/.exec(mail.body_text)?.[1] as string;
    const res = await t.inject({
      method: 'POST',
      url: link,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    assert.equal(res.statusCode, 200);
    assert.equal(
      await db().selectFrom('status_subscriptions').selectAll().where('email', '=', anaEmail).executeTakeFirst(),
      undefined,
    );
    assert.equal(
      (await db().selectFrom('mail_outbox').selectAll().where('to_address', '=', anaEmail).execute()).length,
      0,
    );
    await status().createIncident({ title: 'After ana left', impact: 'minor', message: 'x' });
    await runJobs();
    assert.equal((await notices(anaEmail)).length, 0);
  });

  it('two nodes fanning out one event at once send each of 1,100 mails once', async () => {
    const at = clock.now().toISOString();
    const rows = Array.from({ length: 1_100 }, (_, i) => ({
      id: randomUUID(),
      kind: 'email',
      email: `bulk-${i}@example.com`,
      webhook_url: null,
      webhook_host: null,
      secret_sealed: null,
      component_ids: null,
      confirm_token_hash: null,
      confirm_expires_at: null,
      confirmed_at: at,
      disabled_at: null,
      disabled_reason: null,
      created_at: at,
      updated_at: at,
    }));
    for (let i = 0; i < rows.length; i += 100)
      await db()
        .insertInto('status_subscriptions')
        .values(rows.slice(i, i + 100))
        .execute();
    clock.advance(1_000);
    // The relay refuses meanwhile: these mails are counted in the outbox, not sent (a run stops at a failure).
    smtp.state.refuse = true;
    await status().createIncident({ title: 'Bulk news', impact: 'minor', message: 'x' });
    const other = createStatusService(t.app.kernel);
    const [a, b] = await Promise.all([status().fanOut(), other.fanOut()]);
    await other.deactivateSubscriptions();
    const mails = await db()
      .selectFrom('mail_outbox')
      .select(['to_address'])
      .where('subject', '=', '[Acme Cloud] New incident: Bulk news')
      .execute();
    assert.equal(mails.length, 1_101, `${a.mails} + ${b.mails}`);
    assert.equal(new Set(mails.map((m) => m.to_address)).size, 1_101);
    assert.equal(a.mails + b.mails, 1_101);
    await t.app.kernel.mailer.deliverPending();
    await db().deleteFrom('mail_outbox').where('to_address', 'like', 'bulk-%').execute();
    await db().deleteFrom('status_subscriptions').where('email', 'like', 'bulk-%').execute();
    smtp.state.refuse = false;
  });

  it('in a server, a change reaches the subscribers at once, without waiting for the job', async () => {
    status().activateSubscriptions();
    const seen = hooks.at('/hooks/all').length;
    await status().createIncident({ title: 'Told at once', impact: 'minor', message: 'x' });
    const deadline = Date.now() + 10_000;
    let got: ReceivedHook | undefined;
    while (!got && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      got = hooks
        .at('/hooks/all')
        .slice(seen)
        .find((h) => h.body.includes('Told at once'));
    }
    assert.ok(got, 'the webhook got the event');
    assert.equal(verifySignature(got, secrets.get('/hooks/all') as string, clock.now().getTime()), true);
  });
});
