import type { Kernel } from '../kernel.js';
import * as store from './store.js';
import type { ComponentRow, IncidentRow, MaintenanceRow, ServiceRow } from './store.js';
import { StatusProjection } from './projection.js';
import { statusContext, type StatusContext } from './context.js';
import * as catalog from './catalog.js';
import type { ComponentInput, ServiceInput, ServicePatch } from './catalog.js';
import * as incidents from './incidents.js';
import type { IncidentDetail, IncidentInput, IncidentUpdateInput } from './incidents.js';
import * as maintenance from './maintenance.js';
import type { MaintenanceChange, MaintenanceInput } from './maintenance.js';
import * as snapshots from './snapshots.js';
import type { SealedValues } from '../lib/sealed-rotation.js';
import { SerialRuns } from './serial-runs.js';
import { subscriberLinks, type SubscriberLinks } from './subscriber-links.js';
import * as subscriptions from './subscriptions.js';
import type { SubscribeInput, SubscribeResult } from './subscriptions.js';
import { listSubscribers, type SubscriberView } from './subscriber-list.js';
import { fanOut, type FanOutResult } from './fanout.js';
import { createWebhookSender, type DeliveryResult } from './webhooks.js';
import { pruneEvents } from './event-store.js';
import { STATUS_TOPIC } from './projection.js';

export type { IncidentDetail } from './incidents.js';
export type { SubscribeResult } from './subscriptions.js';
export type { SubscriberView } from './subscriber-list.js';

/** How long fanned-out events (and their deliveries' records) are kept. */
const EVENT_RETENTION_MS = 30 * 86_400_000;

/**
 * Publishing the platform's status (every entry point, CLI or job, goes through here). Each
 * write publishes on the `status` topic in its transaction, so this process's projection
 * rebuilds at once and other processes' within the change feed's poll.
 */
export class StatusService {
  readonly projection: StatusProjection;
  readonly links: SubscriberLinks;
  /** The webhooks' signing secrets, re-sealed by `gantry secrets rotate` (src/lib/sealed-rotation.ts). */
  readonly sealed: SealedValues = {
    columns: [
      {
        table: 'status_subscriptions',
        keyColumn: 'id',
        column: 'secret_sealed',
        contextColumns: [],
        context: (row) => subscriptions.secretContext(String(row.id)),
      },
    ],
  };
  private readonly ctx: StatusContext;
  private readonly fanOuts = new SerialRuns();
  private readonly sends = new SerialRuns();
  private readonly sendDue: (now: Date) => Promise<DeliveryResult>;
  private stopWatching: (() => void) | null = null;

  constructor(private readonly kernel: Kernel) {
    this.projection = new StatusProjection(kernel);
    this.ctx = statusContext(kernel);
    this.links = subscriberLinks(kernel);
    this.sendDue = createWebhookSender(this.ctx);
  }

  createService(input: ServiceInput): Promise<ServiceRow> {
    return catalog.createService(this.ctx, input);
  }

  updateService(slug: string, patch: ServicePatch): Promise<ServiceRow> {
    return catalog.updateService(this.ctx, slug, patch);
  }

  listServices(): Promise<ServiceRow[]> {
    return store.allServices(this.kernel.db);
  }

  createComponent(input: ComponentInput): Promise<ComponentRow> {
    return catalog.createComponent(this.ctx, input);
  }

  /** Sets a component's status; every change is a timestamped history row (uptime is computed from them). */
  setComponentStatus(slug: string, status: string): Promise<ComponentRow> {
    return catalog.setComponentStatus(this.ctx, slug, status);
  }

  listComponents(): Promise<ComponentRow[]> {
    return store.allComponents(this.kernel.db);
  }

  createIncident(input: IncidentInput): Promise<IncidentDetail> {
    return incidents.createIncident(this.ctx, input);
  }

  /** Posts an update: the incident takes its status (and impact when given). */
  updateIncident(idOrSlug: string, input: IncidentUpdateInput): Promise<IncidentDetail> {
    return incidents.updateIncident(this.ctx, idOrSlug, input);
  }

  incident(idOrSlug: string): Promise<IncidentDetail> {
    return incidents.incidentDetail(this.kernel.db, idOrSlug);
  }

  listIncidents(): Promise<IncidentRow[]> {
    return store.allIncidents(this.kernel.db);
  }

  createMaintenance(input: MaintenanceInput): Promise<MaintenanceRow> {
    return maintenance.createMaintenance(this.ctx, input);
  }

  updateMaintenance(idOrSlug: string, input: MaintenanceChange): Promise<MaintenanceRow> {
    return maintenance.updateMaintenance(this.ctx, idOrSlug, input);
  }

  listMaintenance(): Promise<MaintenanceRow[]> {
    return store.allMaintenance(this.kernel.db);
  }

  /** The timed moves of maintenance windows (the job's body). */
  advanceMaintenance(now: Date): Promise<maintenance.MaintenanceMove[]> {
    return maintenance.advanceMaintenance(this.ctx, now);
  }

  /** The daily snapshot and uptime summaries (the midnight job's body). */
  writeDailySnapshot(now: Date): Promise<store.SnapshotRow> {
    return snapshots.writeDailySnapshot(this.ctx, now);
  }

  snapshot(date: string): Promise<store.SnapshotRow | undefined> {
    return store.snapshotOf(this.kernel.db, date, 'platform', 'all');
  }

  /** An email (double opt-in) or webhook subscription (docs/status.md, Subscriptions). */
  subscribe(input: SubscribeInput): Promise<SubscribeResult> {
    return subscriptions.subscribe(this.ctx, this.links, input);
  }

  confirmSubscription(token: string): Promise<{ email: string }> {
    return subscriptions.confirm(this.ctx, token);
  }

  unsubscribe(token: string): Promise<void> {
    return subscriptions.unsubscribe(this.ctx, this.links, token);
  }

  listSubscribers(): Promise<SubscriberView[]> {
    return listSubscribers(this.kernel.db);
  }

  removeSubscriber(id: string) {
    return subscriptions.removeSubscriber(this.ctx, id);
  }

  /** The fan-out job's body: events into mails and webhook deliveries, then their delivery started. */
  async fanOut(): Promise<FanOutResult> {
    const result = await this.fanOuts.run(() => fanOut(this.ctx, this.links));
    this.startDeliveries(result);
    return result;
  }

  /** The webhook job's body: every delivery due at `now`. */
  deliverWebhooks(now: Date): Promise<DeliveryResult> {
    return this.sends.run(() => this.sendDue(now));
  }

  /** Housekeeping: unconfirmed addresses past their link's expiry, and old events. */
  async expireSubscriptions(now: Date): Promise<{ expired: number; prunedEvents: number }> {
    const expired = await subscriptions.expirePending(this.ctx, now);
    const prunedEvents = await pruneEvents(this.kernel.db, new Date(now.getTime() - EVENT_RETENTION_MS).toISOString());
    return { expired, prunedEvents };
  }

  /**
   * Servers call this: every status change (this process's or another's, through the change
   * feed) starts a fan-out at once, in the background, so subscribers hear within seconds
   * rather than at the job's next tick, and the publishing request never waits for it.
   */
  activateSubscriptions(): void {
    this.stopWatching ??= this.kernel.changes.subscribe(STATUS_TOPIC, () =>
      this.fanOuts.kick(
        async () => {
          // The page first: the projection rebuilds for the same change before the fan-out
          // takes the database (docs/status.md, Benchmark).
          await this.projection.current();
          this.startDeliveries(await fanOut(this.ctx, this.links));
        },
        (err) => this.kernel.logger.error('status fan-out failed', { err }),
      ),
    );
  }

  /** Servers call this as they stop, before the database closes: no new runs, and the ones under way end. */
  async deactivateSubscriptions(): Promise<void> {
    this.stopWatching?.();
    this.stopWatching = null;
    await this.fanOuts.idle();
    await this.sends.idle();
  }

  private startDeliveries(result: FanOutResult): void {
    if (result.mails > 0) void this.kernel.mailer.deliverPending();
    if (result.webhooks > 0)
      this.sends.kick(
        () => this.sendDue(this.kernel.clock.now()),
        (err) => this.kernel.logger.error('status webhook delivery failed', { err }),
      );
  }
}

export const createStatusService = (kernel: Kernel): StatusService => new StatusService(kernel);
