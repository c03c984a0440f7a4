import { DomainError } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import { safeEqual } from '../lib/crypto.js';
import type { Kernel } from '../kernel.js';
import type { OneTimeTokens } from './one-time-tokens.js';
import type { EndSignIns } from './flows.js';
import * as store from './store.js';
import { magicLinkMail } from './mails.js';

const MAGIC_LINK_TTL_SEC = 15 * 60;

/**
 * Passwordless sign-in by email (docs/interface.md, Sign-in API): the mail links to {public}/auth/magic?token=T;
 * the token is single-use and lives 15 minutes. `returnTo` lets the sign-in page of an OAuth
 * authorize request continue that same request after the link is opened, but only in the
 * browser that asked for the link (`browser`, a hash of its pre-session cookie): otherwise a
 * link someone asked for on the victim's behalf would continue their request (docs/oauth.md).
 */
export function createMagicLinks(kernel: Kernel, tokens: OneTimeTokens, endSignIns: EndSignIns) {
  const { db, clock, mailer, config } = kernel;
  return {
    /** Always succeeds from the caller's view, whether or not the email is known. */
    async request(email: string, options: { returnTo?: string | null; browser?: string | null } = {}): Promise<void> {
      await inTransaction(db, async (trx) => {
        const user = await store.findUserByEmail(trx, email);
        if (!user) return tokens.issueDecoy(trx, 'magic_link', MAGIC_LINK_TTL_SEC);
        const { secret } = await tokens.issue(trx, {
          userId: user.id,
          purpose: 'magic_link',
          ttlSec: MAGIC_LINK_TTL_SEC,
          payload: options.returnTo ? { returnTo: options.returnTo, browser: options.browser ?? null } : undefined,
        });
        await mailer.enqueue(trx, magicLinkMail(config, user.email, secret));
      });
      void mailer.deliverPending();
    },

    /**
     * Uses a magic link: the user (now with a confirmed email) and where to continue, which is
     * null unless `browser` is the one that asked for the link.
     */
    async consume(secret: string, browser: string | null = null) {
      return inTransaction(db, async (trx) => {
        const used = await tokens.consume(trx, 'magic_link', secret);
        if (!used?.userId)
          throw new DomainError('UNAUTHORIZED', 'This sign-in link is invalid, used or expired; ask for a new one');
        const user = await store.findUserById(trx, used.userId);
        if (!user)
          throw new DomainError('UNAUTHORIZED', 'This sign-in link is invalid, used or expired; ask for a new one');
        if (!user.email_verified_at) {
          // Opening the link proves the mailbox is theirs, but not that they chose the password:
          // anyone may register an address they do not own. So the mailbox owner takes the account
          // over clean: the password, every session, grant and consent made before go
          // (pre-account takeover; docs/kernel.md, Unconfirmed accounts).
          const now = clock.now().toISOString();
          await store.updateUser(trx, user.id, { email_verified_at: now, password_hash: null, updated_at: now });
          await endSignIns(trx, user.id, 'mailbox_proven', { forgetConsents: true });
          await kernel.changes.publish(trx, 'identity.user-changed', user.id);
          user.email_verified_at = now;
          user.password_hash = null;
        }
        const sameBrowser =
          typeof used.payload.browser === 'string' && browser !== null && safeEqual(used.payload.browser, browser);
        const returnTo = typeof used.payload.returnTo === 'string' ? used.payload.returnTo : null;
        return { user, returnTo: sameBrowser ? returnTo : null, continuedElsewhere: returnTo !== null && !sameBrowser };
      });
    },
  };
}
