import type { NotificationRow } from './store.js';

/** The Notification (docs/interface.md, Resources): never the owner, seq or archive bookkeeping. */
export function presentNotification(row: NotificationRow) {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    icon: row.icon,
    actionUrl: row.action_url,
    category: row.category,
    priority: row.priority,
    status: row.status,
    readAt: row.read_at,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}

export type PresentedNotification = ReturnType<typeof presentNotification>;
