import type { Generated } from 'kysely';

export interface NotificationsTable {
  seq: Generated<number>; // insertion order: stable keyset for cursors, newest = highest
  id: string;
  user_id: string;
  title: string;
  body: string;
  icon: string | null;
  action_url: string | null;
  category: string;
  priority: string; // low, normal, high
  status: string; // unread, read, archived
  read_at: string | null;
  archived_at: string | null;
  expires_at: string | null;
  created_at: string;
}

export interface NotificationsTables {
  notifications: NotificationsTable;
}
