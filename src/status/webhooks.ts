import { inTransaction } from '../db/tx.js';
import { hmacSha256 } from '../lib/crypto.js';
import { guardedFetch } from '../lib/outbound.js';
import { open } from '../lib/sealed.js';
import type { StatusContext } from './context.js';
import * as deliveries from './delivery-store.js';
import { disableSubscription } from './subscription-store.js';
import { secretContext } from './subscriptions.js';

/**
 * Webhook deliveries (docs/status.md, Webhooks): each event POSTed as JSON to each webhook,
 * signed `X-Gantry-Signature: t=UNIX,v1=HEX` (HMAC-SHA256 of `t.body` under the subscription's
 * secret, as Stripe signs its webhooks), through the outbound guard (no internal address, no
 * redirect, 10 s). A failure is retried with a growing wait (30 s doubling up to an hour)
 * for a day from the event; then, or at once on 410 Gone, the subscription is disabled.
 */
const BATCH = 50;
/** Deliveries in flight at once within a run (each to its own endpoint, most of them). */
const PARALLEL = 8;
/** Longer than one attempt can take (the guard's 10 s deadline): no lease runs out mid-send. */
const LEASE_MS = 60_000;
const RETRY_FOR_MS = 24 * 3_600_000;

/** The wait after the n-th failed attempt. */
const backoffMs = (attempts: number): number => Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);

/** The signature header of `body` sent at `unixSeconds`. */
const signatureHeader = (secret: string, unixSeconds: number, body: string): string =>
  `t=${unixSeconds},v1=${hmacSha256(secret, `${unixSeconds}.${body}`).toString('hex')}`;

type Due = Awaited<ReturnType<typeof deliveries.dueDeliveries>>[number];

export interface DeliveryResult {
  delivered: number;
  retrying: number;
  failed: number;
}

export function createWebhookSender(ctx: StatusContext) {
  const { db, secrets, config, logger } = ctx.kernel;
  const fetch = guardedFetch({ allowPrivate: config.allowPrivateNetworks });

  /** Gives up on a webhook: this delivery and every pending one, in one transaction. */
  const disable = (d: Due, reason: string, code: number | null, at: string) =>
    inTransaction(db, async (trx) => {
      await deliveries.recordAttempt(trx, d.id, { status: 'failed', statusCode: code, error: reason, at });
      await disableSubscription(trx, d.subscription_id, reason, at);
      await deliveries.failPendingOf(trx, d.subscription_id, 'the subscription was disabled', at);
    });

  async function attempt(d: Due, now: Date, result: DeliveryResult): Promise<void> {
    const nowIso = now.toISOString();
    if (!(await deliveries.claimDelivery(db, d.id, nowIso, new Date(now.getTime() + LEASE_MS).toISOString()))) return;
    if (d.disabled_at || !d.webhook_url || !d.secret_sealed) {
      await deliveries.recordAttempt(db, d.id, {
        status: 'failed',
        statusCode: null,
        error: 'the subscription was disabled',
        at: nowIso,
      });
      result.failed++;
      return;
    }
    let code: number | null = null;
    let error: string;
    try {
      const secret = open(secrets, d.secret_sealed, secretContext(d.subscription_id));
      const res = await fetch(d.webhook_url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Gantry-Webhooks/1',
          'x-gantry-event': d.type,
          'x-gantry-delivery': d.id,
          'x-gantry-signature': signatureHeader(secret, Math.floor(now.getTime() / 1000), d.payload),
        },
        body: d.payload,
      });
      code = res.status;
      await res.body?.cancel();
      if (res.ok) {
        await deliveries.recordAttempt(db, d.id, { status: 'delivered', statusCode: code, error: null, at: nowIso });
        result.delivered++;
        return;
      }
      error = `the endpoint answered ${code}`;
      if (code === 410) {
        await disable(d, 'the endpoint answered 410 Gone', code, nowIso);
        result.failed++;
        return;
      }
    } catch (err) {
      error = String((err as Error).message)
        .split('\n')[0]
        .slice(0, 300);
    }
    logger.warn('status webhook delivery failed', {
      deliveryId: d.id,
      subscriptionId: d.subscription_id,
      host: new URL(d.webhook_url).host,
      attempt: d.attempts + 1,
      reason: error,
    });
    if (now.getTime() - Date.parse(d.created_at) >= RETRY_FOR_MS) {
      await disable(d, `failed for a day; last: ${error}`, code, nowIso);
      result.failed++;
      return;
    }
    const next = new Date(now.getTime() + backoffMs(d.attempts + 1)).toISOString();
    await deliveries.recordAttempt(db, d.id, {
      status: 'pending',
      statusCode: code,
      error,
      at: nowIso,
      nextAttemptAt: next,
    });
    result.retrying++;
  }

  /** Sends what is due at `now`, PARALLEL at a time, until nothing due is left to this process. */
  return async function deliverDue(now: Date): Promise<DeliveryResult> {
    const result: DeliveryResult = { delivered: 0, retrying: 0, failed: 0 };
    for (;;) {
      const due = await deliveries.dueDeliveries(db, now.toISOString(), BATCH);
      if (due.length === 0) return result;
      const before = result.delivered + result.retrying + result.failed;
      // One webhook's deliveries go one after the other, oldest event first, so a receiver
      // mostly sees them in order; different webhooks go in parallel.
      const bySubscription = new Map<string, Due[]>();
      for (const d of due) bySubscription.set(d.subscription_id, [...(bySubscription.get(d.subscription_id) ?? []), d]);
      const queues = [...bySubscription.values()];
      let next = 0;
      const worker = async () => {
        while (next < queues.length) for (const d of queues[next++]) await attempt(d, now, result);
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, queues.length) }, worker));
      // Another process holds what is left (its leases): leave it to that process.
      if (due.length < BATCH || result.delivered + result.retrying + result.failed === before) return result;
    }
  };
}
