import { afterCommit, inTransaction } from '../db/tx.js';
import { badRequest, conflict, DomainError, notFound } from '../http/errors.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { isUuid, newId } from '../lib/ids.js';
import { assertPublicUrl, BlockedAddressError } from '../lib/outbound.js';
import { seal } from '../lib/sealed.js';
import type { StatusContext } from './context.js';
import * as store from './subscription-store.js';
import type { SubscriberLinks } from './subscriber-links.js';
import { CONFIRMATION_KIND, confirmationMail, SUBSCRIBER_MAIL_KINDS } from './subscription-mail.js';

/**
 * Subscribing to the status service (docs/status.md, Subscriptions): anyone may ask, so every
 * door is bounded so that the form cannot be used to mail strangers. An address is mailed a
 * confirmation (double opt-in) and nothing else until it is confirmed; a recipient gets at most
 * a few confirmations a day whoever asks; the route limits each caller's address; and the
 * whole installation sends a bounded number of confirmations an hour. Addresses are kept for
 * this purpose only and deleted on unsubscribe, with their mails.
 */
export const SUBSCRIPTION_LIMITS = {
  /** Confirmation mails to one address in 24 hours; further requests mail nothing. */
  confirmationsPerRecipient: 3,
  /** Confirmation mails to anyone in an hour: past it, 429 (a spray over many addresses). */
  confirmationsPerHour: 500,
  /** Webhook subscriptions still delivered to on one host. */
  webhooksPerHost: 10,
  /** How long a confirmation link works; an unconfirmed address is deleted after it. */
  confirmTtlHours: 48,
} as const;

/** The AAD context of a webhook's sealed secret: a value moved to another row fails to open. */
export const secretContext = (subscriptionId: string) => `status_subscriptions:${subscriptionId}:secret`;

export interface SubscribeInput {
  email?: string;
  webhookUrl?: string;
  componentIds?: string[];
}

export type SubscribeResult =
  | { type: 'email'; email: string }
  | {
      type: 'webhook';
      id: string;
      webhookUrl: string;
      componentIds: string[] | null;
      secret: string;
      createdAt: string;
    };

const invalid = (field: string, message: string) => badRequest(message, [{ field, message, type: 'any.invalid' }]);

async function checkedComponents(ctx: StatusContext, ids: string[] | undefined): Promise<string[] | null> {
  if (ids === undefined || ids.length === 0) return null;
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  const known = new Set(await store.publicComponentIds(ctx.kernel.db, unique));
  const unknown = unique.filter((id) => !known.has(id));
  if (unknown.length > 0) throw invalid('componentIds', `No public component has the id ${unknown[0]}`);
  return unique;
}

/** 429 when the installation has sent its confirmations for the hour. */
async function checkHourlyConfirmations(ctx: StatusContext): Promise<void> {
  const now = ctx.kernel.clock.now().getTime();
  const since = new Date(now - 3_600_000).toISOString();
  const sent = await ctx.kernel.mailer.queuedOfKindSince(ctx.kernel.db, CONFIRMATION_KIND, since);
  if (sent.count < SUBSCRIPTION_LIMITS.confirmationsPerHour) return;
  const retryAfter = sent.oldest ? Math.max(1, Math.ceil((Date.parse(sent.oldest) + 3_600_000 - now) / 1000)) : 3600;
  throw new DomainError(
    'RATE_LIMIT_EXCEEDED',
    'Too many subscriptions are waiting for confirmation; try again later',
    { quota: 'confirmations', limit: SUBSCRIPTION_LIMITS.confirmationsPerHour, windowSec: 3600 },
    { 'Retry-After': String(retryAfter) },
  );
}

/**
 * An email subscription: the same answer whether the address is new, waiting for its
 * confirmation or already subscribed, so nobody learns who subscribed. A new or waiting
 * address gets a (new) confirmation link unless it has had its confirmations for the day.
 */
async function subscribeEmail(
  ctx: StatusContext,
  links: SubscriberLinks,
  email: string,
  componentIds: string[] | null,
): Promise<SubscribeResult> {
  await checkHourlyConfirmations(ctx);
  const { kernel } = ctx;
  await inTransaction(kernel.db, async (trx) => {
    const existing = await store.subscriptionByEmail(trx, email);
    if (existing?.confirmed_at) return;
    const now = kernel.clock.now();
    const since = new Date(now.getTime() - 86_400_000).toISOString();
    const mailed = await kernel.mailer.queuedSince(trx, email, CONFIRMATION_KIND, since);
    if (mailed.count >= SUBSCRIPTION_LIMITS.confirmationsPerRecipient) return;
    const token = randomToken();
    const at = now.toISOString();
    const pending = {
      confirm_token_hash: sha256Hex(token),
      confirm_expires_at: new Date(now.getTime() + SUBSCRIPTION_LIMITS.confirmTtlHours * 3_600_000).toISOString(),
      component_ids: componentIds === null ? null : JSON.stringify(componentIds),
      updated_at: at,
    };
    const id = existing?.id ?? newId();
    if (existing) await store.updateSubscription(trx, id, pending);
    else
      await store.insertSubscription(trx, {
        id,
        kind: 'email',
        email,
        webhook_url: null,
        webhook_host: null,
        secret_sealed: null,
        confirmed_at: null,
        disabled_at: null,
        disabled_reason: null,
        created_at: at,
        ...pending,
      });
    await kernel.mailer.enqueue(
      trx,
      confirmationMail({
        brand: kernel.config.brand.name,
        to: email,
        confirmUrl: links.confirmUrl(token),
        unsubscribeUrl: links.unsubscribeUrl(id),
        ttlHours: SUBSCRIPTION_LIMITS.confirmTtlHours,
      }),
    );
    afterCommit(trx, () => void kernel.mailer.deliverPending());
  });
  return { type: 'email', email };
}

/** A webhook: its URL checked by the outbound guard now (and again at every delivery), its secret shown once. */
async function subscribeWebhook(
  ctx: StatusContext,
  rawUrl: string,
  componentIds: string[] | null,
): Promise<SubscribeResult> {
  const { kernel } = ctx;
  let url: URL;
  try {
    url = await assertPublicUrl(rawUrl, kernel.config.allowPrivateNetworks);
  } catch (err) {
    if (err instanceof BlockedAddressError) throw invalid('webhookUrl', err.message);
    throw err;
  }
  const id = newId();
  const secret = `whsec_${randomToken()}`;
  const at = kernel.clock.now().toISOString();
  await inTransaction(kernel.db, async (trx) => {
    if ((await store.countActiveWebhooksOfHost(trx, url.host)) >= SUBSCRIPTION_LIMITS.webhooksPerHost)
      throw conflict(`${url.host} already has ${SUBSCRIPTION_LIMITS.webhooksPerHost} webhook subscriptions`);
    await store.insertSubscription(trx, {
      id,
      kind: 'webhook',
      email: null,
      webhook_url: url.href,
      webhook_host: url.host,
      secret_sealed: seal(kernel.secrets, secret, secretContext(id)),
      component_ids: componentIds === null ? null : JSON.stringify(componentIds),
      confirm_token_hash: null,
      confirm_expires_at: null,
      confirmed_at: at,
      disabled_at: null,
      disabled_reason: null,
      created_at: at,
      updated_at: at,
    });
  });
  return { type: 'webhook', id, webhookUrl: url.href, componentIds, secret, createdAt: at };
}

export async function subscribe(
  ctx: StatusContext,
  links: SubscriberLinks,
  input: SubscribeInput,
): Promise<SubscribeResult> {
  const componentIds = await checkedComponents(ctx, input.componentIds);
  if (input.email !== undefined) return subscribeEmail(ctx, links, input.email, componentIds);
  if (input.webhookUrl !== undefined) return subscribeWebhook(ctx, input.webhookUrl, componentIds);
  throw badRequest('Give an email or a webhookUrl');
}

/** Confirms an address with the mailed secret; 410 for an unknown, used or expired one. */
export async function confirm(ctx: StatusContext, token: string): Promise<{ email: string }> {
  const gone = () =>
    new DomainError('GONE', 'This confirmation link is invalid, already used or expired; subscribe again');
  const hash = sha256Hex(token);
  const { kernel } = ctx;
  return inTransaction(kernel.db, async (trx) => {
    const row = await store.subscriptionByConfirmHash(trx, hash);
    const at = kernel.clock.now().toISOString();
    if (!row?.email || !row.confirm_expires_at || row.confirm_expires_at <= at) throw gone();
    if (!(await store.confirmSubscription(trx, row.id, hash, at))) throw gone();
    return { email: row.email };
  });
}

/**
 * Deletes a subscription and, for an address, every mail of ours to it (sent or not): what
 * Gantry kept of the address goes with it. Null when it was already gone.
 */
async function forgetSubscription(ctx: StatusContext, id: string) {
  const { kernel } = ctx;
  return inTransaction(kernel.db, async (trx) => {
    const row = await store.subscriptionById(trx, id);
    if (!row) return null;
    await store.deleteSubscription(trx, id);
    if (row.email) await kernel.mailer.forget(trx, row.email, SUBSCRIBER_MAIL_KINDS);
    return row;
  });
}

/** The one-click unsubscribe (a link's POST): 400 for a damaged link; done already is fine. */
export async function unsubscribe(ctx: StatusContext, links: SubscriberLinks, token: string): Promise<void> {
  const id = links.unsubscribeId(token);
  if (!id) throw badRequest('This unsubscribe link is incomplete or damaged; open the link from the mail again');
  await forgetSubscription(ctx, id);
}

/** The operator's removal (`gantry status subscribers remove`). */
export async function removeSubscriber(ctx: StatusContext, id: string) {
  const row = isUuid(id) ? await forgetSubscription(ctx, id.toLowerCase()) : null;
  if (!row) throw notFound(`Subscriber ${id}`);
  return row;
}

/**
 * Deletes the addresses never confirmed once their link has expired (with the confirmation
 * mails: the day's quota they counted for is long over by then).
 */
export async function expirePending(ctx: StatusContext, now: Date): Promise<number> {
  const expired = await store.expiredPending(ctx.kernel.db, now.toISOString());
  for (const row of expired) await forgetSubscription(ctx, row.id);
  return expired.length;
}
