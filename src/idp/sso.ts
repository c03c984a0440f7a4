import { inTransaction, type Executor } from '../db/tx.js';
import { DomainError } from '../http/errors.js';
import type { Kernel } from '../kernel.js';
import type { AuditService } from '../audit/service.js';
import type { IdentityService } from '../identity/service.js';
import type { IdpService } from './service.js';
import type { IdpRow } from './store.js';

/**
 * RFC 8176 methods that prove more than a password: explicit multiple factors, a one-time
 * code, a hardware or software key, a smart card. Only these make an SSO sign-in count as the
 * second factor (docs/identity-providers.md, Second factor).
 */
const SECOND_FACTOR_AMR = ['mfa', 'otp', 'hwk', 'swk', 'sc'];

/** The ID token's claims SSO reads (OpenID Connect Core 2 and 5.1). */
export interface SsoClaims {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  name?: unknown;
  amr?: unknown;
}

export type SsoOutcome = { userId: string; factorVerified: boolean } | { refused: string };

const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * Who an SSO sign-in is (docs/identity-providers.md, Sign-in): the user linked to the IdP's
 * subject; else, on the IdP's first sign-in of that subject, an existing user of the same
 * email only when this IdP is bound to the email's domain and asserts email_verified (no
 * takeover of a local account through an IdP the operator did not bind to it); else a new user
 * (just in time) with the IdP's verified email, a member of the IdP's account when it has one.
 */
export function createSsoSignIn(
  kernel: Kernel,
  deps: {
    identity: IdentityService;
    audit: AuditService;
    idp: IdpService;
    accounts: {
      members: {
        addInTransaction(
          trx: Executor,
          accountId: string,
          input: { chainerId: string; role: 'member' },
        ): Promise<unknown>;
      };
    };
  },
) {
  const { db } = kernel;

  return {
    async resolve(idp: IdpRow, claims: SsoClaims): Promise<SsoOutcome> {
      const amr = Array.isArray(claims.amr) ? claims.amr.filter((m): m is string => typeof m === 'string') : [];
      const factorVerified = amr.some((m) => SECOND_FACTOR_AMR.includes(m));
      const linked = await deps.idp.linkedUser(idp.id, claims.sub);
      if (linked) return { userId: linked, factorVerified };

      if (typeof claims.email !== 'string' || !claims.email.includes('@'))
        return {
          refused: `${idp.name} did not tell us your email address, so no account can be found or made for you.`,
        };
      const email = claims.email.trim().toLowerCase();
      if (claims.email_verified !== true)
        return {
          refused: `${idp.name} has not verified your email address ${email}. Verify it there, then try again.`,
        };
      const domains = await deps.idp.boundDomains(idp.id);
      const boundHere = domains.includes(domainOf(email));
      const elsewhere = await deps.idp.forEmail(email);

      const existing = await deps.identity.findUserByEmail(email);
      if (existing) {
        if (!boundHere)
          return {
            refused: `An account with the email ${email} already exists here. Sign in with your password or a sign-in link; ${idp.name} is not set up to sign in addresses of ${domainOf(email)}.`,
          };
        await inTransaction(db, async (trx) => {
          await deps.idp.link(idp.id, claims.sub, existing.id, trx);
          if (idp.account_id)
            await deps.audit.record(trx, null, {
              accountId: idp.account_id,
              action: 'idp.user_linked',
              targetId: existing.id,
              metadata: { idpId: idp.id, subject: claims.sub },
            });
        });
        return { userId: existing.id, factorVerified };
      }

      if (elsewhere && elsewhere.id !== idp.id)
        return { refused: `Addresses of ${domainOf(email)} sign in through ${elsewhere.name}, not ${idp.name}.` };
      if (domains.length > 0 && !boundHere)
        return { refused: `${idp.name} signs in addresses of ${domains.join(', ')} only.` };
      // The user, their link and their membership commit together: no user left without the
      // account the IdP is bound to if any part fails (docs/identity-providers.md, Sign-in).
      const made = await inTransaction(db, async (trx) => {
        const user = await deps.identity.createUser(
          {
            email,
            verified: true,
            fullName: typeof claims.name === 'string' ? claims.name.slice(0, 180) : null,
          },
          trx,
        );
        await deps.idp.link(idp.id, claims.sub, user.id, trx);
        if (idp.account_id) {
          await deps.accounts.members.addInTransaction(trx, idp.account_id, { chainerId: user.id, role: 'member' });
          await deps.audit.record(trx, null, {
            accountId: idp.account_id,
            action: 'idp.user_provisioned',
            targetId: user.id,
            metadata: { idpId: idp.id, subject: claims.sub },
          });
        }
        return user.id;
      }).catch((err: unknown) => {
        // The IdP's account closed meanwhile: nobody is made, and the person is told why.
        if (err instanceof DomainError && err.status === 404) return null;
        throw err;
      });
      if (made === null)
        return {
          refused: `The account ${idp.name} signs people into is not open here any more, so no account can be made for you. Ask the operator.`,
        };
      return { userId: made, factorVerified };
    },
  };
}
