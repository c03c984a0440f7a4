import { inTransaction } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { StatusContext } from './context.js';
import * as deliveries from './delivery-store.js';
import * as events from './event-store.js';
import type { EventRow } from './event-store.js';
import type { StatusEventBody } from './events.js';
import type { SubscriberLinks } from './subscriber-links.js';
import { noticeMail, noticeParts } from './subscription-mail.js';
import * as store from './subscription-store.js';

/**
 * The fan-out (docs/status.md, Subscriptions): each event is turned into a mail per confirmed
 * address (into the outbox) and a delivery per webhook, by this job and never by the request
 * that published it. Subscribers are walked in id order, BATCH at a time, each batch one short
 * transaction that also moves the event's cursor; the cursor's guarded move makes a batch go
 * out once even when two nodes run the job, and a crash resumes at the next batch.
 *
 * After each batch the fan-out rests twice as long as the batch took, so it takes at most a
 * third of the process: on SQLite a batch's statements run on the event loop and hold the one
 * connection, and the page (and the projection's rebuild after the very change being told)
 * must keep being served meanwhile (docs/status.md, Benchmark: the page during a fan-out to
 * 10,000 subscribers).
 */
const BATCH = 200;
const REST_PER_WORK = 2;
/** Events taken per run; the job (or the next kick) takes the rest. */
const EVENTS_PER_RUN = 20;

export interface FanOutResult {
  events: number;
  mails: number;
  webhooks: number;
}

/** Whether a subscriber following `components` (null: everything) hears of an event concerning `targets`. */
function reaches(components: string | null, targets: Set<string> | null): boolean {
  if (components === null || targets === null) return true;
  return (JSON.parse(components) as string[]).some((id) => targets.has(id));
}

async function fanOutEvent(ctx: StatusContext, links: SubscriberLinks, event: EventRow, totals: FanOutResult) {
  const { db, mailer, clock, config } = ctx.kernel;
  const brand = config.brand.name;
  const parts = noticeParts(brand, JSON.parse(event.payload) as StatusEventBody);
  const targets = event.targets === null ? null : new Set(JSON.parse(event.targets) as string[]);
  let after = event.fanout_after;
  for (;;) {
    const started = performance.now();
    const audience = await store.audienceAfter(db, after, BATCH, event.created_at);
    const now = clock.now().toISOString();
    if (audience.length === 0) {
      await events.finishEvent(db, event.id, now);
      totals.events++;
      return;
    }
    const last = audience[audience.length - 1].id;
    const reached = audience.filter((s) => reaches(s.component_ids, targets));
    const emails = reached.filter((s) => s.kind === 'email' && s.email !== null);
    const webhooks = reached.filter((s) => s.kind === 'webhook');
    const moved = await inTransaction(db, async (trx) => {
      if (!(await events.advanceEvent(trx, event.id, after, last))) return false;
      await mailer.enqueueMany(
        trx,
        emails.map((s) => noticeMail(brand, parts, s.email as string, links.unsubscribeUrl(s.id))),
        // The event's time: a subscriber's notices go out in the order the events happened,
        // also when one run fans out several events in the same millisecond.
        event.created_at,
      );
      if (webhooks.length > 0)
        await deliveries.insertDeliveries(
          trx,
          webhooks.map((s) => ({
            id: newId(),
            subscription_id: s.id,
            event_id: event.id,
            status: 'pending',
            attempts: 0,
            next_attempt_at: now,
            claimed_until: null,
            last_status_code: null,
            last_error: null,
            created_at: now,
            finished_at: null,
          })),
        );
      return true;
    });
    // Another node moved this event's cursor first: it carries on with it.
    if (!moved) return;
    totals.mails += emails.length;
    totals.webhooks += webhooks.length;
    after = last;
    await new Promise((resolve) => setTimeout(resolve, (performance.now() - started) * REST_PER_WORK));
  }
}

/** One run of the fan-out: the oldest events not fanned out yet, each to its end. */
export async function fanOut(ctx: StatusContext, links: SubscriberLinks): Promise<FanOutResult> {
  const totals: FanOutResult = { events: 0, mails: 0, webhooks: 0 };
  const pending = await events.pendingEvents(ctx.kernel.db, EVENTS_PER_RUN);
  for (const event of pending) await fanOutEvent(ctx, links, event, totals);
  return totals;
}
