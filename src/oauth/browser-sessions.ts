import { randomToken, sha256Hex } from '../lib/crypto.js';
import type { Kernel } from '../kernel.js';
import * as store from './store.js';

export const BROWSER_SESSION_COOKIE = 'gantry_session';
/** Pre-session cookie the sign-in form's CSRF value is bound to (double submit, signed). */
export const PRE_SESSION_COOKIE = 'gantry_presession';
export const BROWSER_SESSION_TTL_SEC = 12 * 3600;

/** The sign-in state of the OAuth pages: the cookie holds a random id, the table its SHA-256. */
export function createBrowserSessions(kernel: Kernel) {
  const { db, clock } = kernel;
  return {
    async start(userId: string): Promise<string> {
      const id = randomToken(32);
      const now = clock.now();
      await store.insertBrowserSession(db, {
        id_hash: sha256Hex(id),
        user_id: userId,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + BROWSER_SESSION_TTL_SEC * 1000).toISOString(),
      });
      return id;
    },

    /** The signed-in user of a cookie value, or null. */
    async userOf(cookieValue: string | null): Promise<string | null> {
      if (!cookieValue) return null;
      const row = await store.findBrowserSession(db, sha256Hex(cookieValue));
      if (!row || row.expires_at <= clock.now().toISOString()) return null;
      return row.user_id;
    },
  };
}

export type BrowserSessions = ReturnType<typeof createBrowserSessions>;
