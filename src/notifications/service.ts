import { badRequest } from '../http/errors.js';
import type { Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';

export const NOTIFICATION_PRIORITIES = ['low', 'normal', 'high'] as const;
export type NotificationPriority = (typeof NOTIFICATION_PRIORITIES)[number];

/** Topic on the change feed when a user's notifications change; key = user id. */
export const NOTIFICATIONS_TOPIC = 'notifications.changed';

export interface NewNotification {
  userId: string;
  title: string;
  body: string;
  category?: string;
  priority?: NotificationPriority;
  icon?: string | null;
  actionUrl?: string | null;
  expiresAt?: Date | null;
}

/**
 * In-app notifications. `notify` is the one way any domain (invitations, connector failures,
 * finished runs, the CLI) creates one; call it inside the transaction of the event it reports.
 */
export function createNotificationsService(kernel: Kernel) {
  const { db, clock, changes } = kernel;

  async function notify(executor: Executor, input: NewNotification): Promise<string> {
    if (!input.title.trim() || !input.body.trim()) throw badRequest('A notification needs a title and a body');
    const id = newId();
    await executor
      .insertInto('notifications')
      .values({
        id,
        user_id: input.userId,
        title: input.title,
        body: input.body,
        icon: input.icon ?? null,
        action_url: input.actionUrl ?? null,
        category: input.category ?? 'system',
        priority: input.priority ?? 'normal',
        status: 'unread',
        read_at: null,
        archived_at: null,
        expires_at: input.expiresAt ? input.expiresAt.toISOString() : null,
        created_at: clock.now().toISOString(),
      })
      .execute();
    await changes.publish(executor, NOTIFICATIONS_TOPIC, input.userId);
    return id;
  }

  return {
    notify,
    /** notify() in a transaction of its own. */
    notifyNow: (input: NewNotification) => notify(db, input),
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
