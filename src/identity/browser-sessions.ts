import { randomToken, sha256Hex } from '../lib/crypto.js';
import type { Kernel } from '../kernel.js';
import { inTransaction } from '../db/tx.js';
import type { createSessions, SignInContext } from './sessions.js';
import * as store from './store.js';

export const BROWSER_SESSION_COOKIE = 'gantry_session';
export const BROWSER_SESSION_TTL_SEC = 12 * 3600;
/** How stale a browser session's last_used_at may get before a page view writes it again. */
const TOUCH_EVERY_MS = 5 * 60_000;

/** A signed-in browser: its user and the identity session it stands on. */
export interface BrowserSignIn {
  userId: string;
  sessionId: string;
}

/**
 * The sign-in state of the pages (OAuth's sign-in and consent, approvals, connector links,
 * the account center): the cookie holds a random id, the table its SHA-256.
 * Each one stands on an identity session, so whatever ends the user's sessions (a password
 * reset, say) signs the browser out of the pages too. A member removal ends no session, only
 * that account's reach (docs/accounts.md), so it leaves these pages signed in.
 */
export function createBrowserSessions(kernel: Kernel, sessions: ReturnType<typeof createSessions>) {
  const { db, clock } = kernel;

  async function signInOf(cookieValue: string | null): Promise<BrowserSignIn | null> {
    if (!cookieValue) return null;
    const row = await store.findBrowserSession(db, sha256Hex(cookieValue));
    if (!row || row.expires_at <= clock.now().toISOString()) return null;
    return (await sessions.isActive(row.session_id)) ? { userId: row.user_id, sessionId: row.session_id } : null;
  }

  return {
    /** `context`: the device, and whether this sign-in proved a second factor (docs/identity.md). */
    async start(userId: string, context: SignInContext = {}): Promise<string> {
      const id = randomToken(32);
      const sessionId = await sessions.open(userId, context);
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
      return (await signInOf(cookieValue))?.userId ?? null;
    },

    /**
     * The signed-in user and session of a cookie value, or null. A page a person opens counts as
     * a use of the session (its last_used_at, written at most every few minutes).
     */
    async signInOf(cookieValue: string | null): Promise<BrowserSignIn | null> {
      const signIn = await signInOf(cookieValue);
      if (signIn) {
        const session = await store.findSession(db, signIn.sessionId);
        const now = clock.now();
        if (session && Date.parse(session.last_used_at) < now.getTime() - TOUCH_EVERY_MS)
          await store.touchSession(db, signIn.sessionId, now.toISOString());
      }
      return signIn;
    },
  };
}
