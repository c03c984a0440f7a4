import { randomToken, sha256Hex } from '../lib/crypto.js';
import type { Kernel } from '../kernel.js';
import { inTransaction } from '../db/tx.js';
import type { createSessions } from './sessions.js';
import * as store from './store.js';

export const BROWSER_SESSION_COOKIE = 'gantry_session';
export const BROWSER_SESSION_TTL_SEC = 12 * 3600;

/**
 * The sign-in state of the pages (OAuth's sign-in and consent, approvals, connector links):
 * the cookie holds a random id, the table its SHA-256.
 * Each one stands on an identity session, so whatever ends the user's sessions (a password
 * reset, say) signs the browser out of the pages too. A member removal ends no session, only
 * that account's reach (docs/accounts.md), so it leaves these pages signed in.
 */
export function createBrowserSessions(kernel: Kernel, sessions: ReturnType<typeof createSessions>) {
  const { db, clock } = kernel;
  return {
    async start(userId: string): Promise<string> {
      const id = randomToken(32);
      const sessionId = await sessions.open(userId);
      const now = clock.now();
      await store.insertBrowserSession(db, {
        id_hash: sha256Hex(id),
        user_id: userId,
        session_id: sessionId,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + BROWSER_SESSION_TTL_SEC * 1000).toISOString(),
      });
      return id;
    },

    /** Signs the browser out: the row goes, and the identity session under it ends. */
    async end(cookieValue: string): Promise<void> {
      await inTransaction(db, async (trx) => {
        const row = await store.deleteBrowserSession(trx, sha256Hex(cookieValue));
        if (row) await sessions.revoke(trx, row.session_id, 'logout');
      });
    },

    /** The signed-in user of a cookie value, or null. */
    async userOf(cookieValue: string | null): Promise<string | null> {
      if (!cookieValue) return null;
      const row = await store.findBrowserSession(db, sha256Hex(cookieValue));
      if (!row || row.expires_at <= clock.now().toISOString()) return null;
      return (await sessions.isActive(row.session_id)) ? row.user_id : null;
    },
  };
}
