import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli, type CliResult } from '../helpers/cli.js';

interface Listed {
  id: string;
  kind: string;
  address: string;
  state: string;
  components: string[] | null;
  deliveries: { delivered: number; pending: number; failed: number } | null;
  lastDelivery: { status: string; attempts: number; lastError: string | null } | null;
}

/** `gantry status subscribers list|remove` (docs/status.md, CLI): who is told, and removing one with --yes. */
describe('gantry status subscribers', () => {
  let t: TestApp;
  let pending: string;
  let confirmed: string;
  let hookId: string;
  const run = (args: string[], terminal?: Parameters<typeof cli>[1]['terminal']) =>
    cli(args, { dataDir: t.dataDir, terminal });
  const db = () => t.app.kernel.db;

  before(async () => {
    t = await createTestApp({ env: { GANTRY_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const s = t.app.services.status;
    await s.createService({ slug: 'api', name: 'Public API' });
    const rest = await s.createComponent({ serviceSlug: 'api', slug: 'api-rest', name: 'REST endpoints' });
    pending = 'pending-reader@example.com';
    confirmed = 'confirmed-reader@example.com';
    await s.subscribe({ email: pending });
    await s.subscribe({ email: confirmed, componentIds: [rest.id] });
    const [mail] = await db().selectFrom('mail_outbox').selectAll().where('to_address', '=', confirmed).execute();
    await s.confirmSubscription(/token=([A-Za-z0-9_-]+)/.exec(mail.body_text)?.[1] as string);
    // A webhook nobody answers at: its delivery fails and waits for a retry.
    const hook = await s.subscribe({ webhookUrl: 'http://127.0.0.1:9/status-hook' });
    hookId = hook.type === 'webhook' ? hook.id : '';
    await s.createIncident({ title: 'Slow', impact: 'minor', message: 'Looking', componentSlugs: ['api-rest'] });
    await s.fanOut();
    await s.deliverWebhooks(t.app.kernel.clock.now());
  });
  after(() => t?.close());

  const rowOf = (email: string) =>
    db().selectFrom('status_subscriptions').selectAll().where('email', '=', email).executeTakeFirst();

  it('list: every subscriber with its state, what it follows and a webhook’s deliveries; never a secret', async () => {
    const res = await run(['status', 'subscribers', 'list', '--json']);
    assert.equal(res.code, 0, res.stderr);
    const list = res.json<Listed[]>();
    const by = (address: string) => list.find((s) => s.address === address);
    assert.equal(by(pending)?.state, 'pending');
    assert.equal(by(confirmed)?.state, 'active');
    assert.deepEqual(by(confirmed)?.components, ['api-rest']);
    assert.equal(by(confirmed)?.deliveries, null);
    const hook = by('http://127.0.0.1:9/status-hook');
    assert.equal(hook?.kind, 'webhook');
    assert.equal(hook?.components, null);
    assert.deepEqual(hook?.deliveries, { delivered: 0, pending: 1, failed: 0 });
    assert.equal(hook?.lastDelivery?.attempts, 1);
    assert.match(String(hook?.lastDelivery?.lastError), /ECONNREFUSED|connect/);
    assert.doesNotMatch(res.stdout, /whsec_|secret/);
    const human = await run(['status', 'subscribers', 'list']);
    assert.match(human.stdout, /^id\s+kind\s+address\s+state\s+components\s+deliveries\s+lastError\s+createdAt/m);
    assert.match(
      human.stdout,
      /webhook\s+http:\/\/127\.0\.0\.1:9\/status-hook\s+active\s+all\s+0 ok, 1 pending, 0 failed/,
    );
  });

  function assertRefusedForYes(res: CliResult) {
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /Remove the email subscriber confirmed-reader@example\.com .*--yes/);
    assert.deepEqual(Object.keys(res.json<{ error: object }>().error), ['code', 'message']);
  }

  it('remove: off a terminal it needs --yes; on one it asks; either way an address goes with its mails', async () => {
    const id = (await rowOf(confirmed))?.id as string;
    assertRefusedForYes(await run(['status', 'subscribers', 'remove', id, '--json']));
    assert.ok(await rowOf(confirmed), 'nothing changed');
    const question =
      /Remove the email subscriber confirmed-reader@example\.com \(id [0-9a-f-]{36}\)\? Nothing more is sent to it, and the address and its mails are deleted\./;
    const declined = await run(['status', 'subscribers', 'remove', id], [{ expect: question, keys: 'n' }]);
    assert.equal(declined.code, 1);
    assert.ok(await rowOf(confirmed));
    const accepted = await run(['status', 'subscribers', 'remove', id], [{ expect: question, keys: 'y' }]);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.match(accepted.stdout, /removed email subscriber confirmed-reader@example\.com/);
    assert.equal(await rowOf(confirmed), undefined);
    assert.equal(
      (await db().selectFrom('mail_outbox').selectAll().where('to_address', '=', confirmed).execute()).length,
      0,
    );
  });

  it('remove --yes: a webhook and its deliveries; an unknown id is NOT_FOUND (exit 2)', async () => {
    const res = await run(['status', 'subscribers', 'remove', hookId, '--yes', '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.json(), {
      id: hookId,
      kind: 'webhook',
      address: 'http://127.0.0.1:9/status-hook',
      removed: true,
    });
    assert.equal(
      (await db().selectFrom('status_webhook_deliveries').selectAll().where('subscription_id', '=', hookId).execute())
        .length,
      0,
    );
    const unknown = await run(['status', 'subscribers', 'remove', hookId, '--yes', '--json']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.json<{ error: { code: string } }>().error.code, 'NOT_FOUND');
  });
});
