import { conflict, notFound } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import { normalizeEmail } from '../identity/service.js';
import type { Caller } from './access.js';
import { liveAccount, type AccountsDeps } from './context.js';
import { presentInvitation } from './presenters.js';
import { OWNER_OR_ADMIN, type AssignableRole } from './roles.js';
import * as store from './store/index.js';
import { createInvitationMail, INVITATION_TTL_SEC } from './invitation-mail.js';
import { createInvitationAcceptance } from './invitation-acceptance.js';

/** The user only when they confirmed their address. */
const confirmedUser = <U extends { email_verified_at: string | null }>(user: U | undefined): U | undefined =>
  user?.email_verified_at ? user : undefined;

/**
 * Email invitations. Member status moves: inviting a user who already exists with a confirmed
 * address creates their membership as `invited` (seat held, no access); accepting moves it to
 * `active`. Inviting an email with no user yet, or whose user never confirmed it, creates no
 * membership until the accept. Revoking an invitation removes the `invited` membership; an
 * `active` member is never touched by invitations.
 *
 * The link's secret goes to the mailbox only: whoever registered an address without
 * confirming it has not shown they read that mailbox (docs/accounts.md, Invitation).
 */
export function createInvitations(deps: AccountsDeps) {
  const { db, clock, mailer } = deps.kernel;
  const audit = deps.audit.record;
  const { authorize } = deps.access;
  const { send, inviterLabel, checkQuotas } = createInvitationMail(deps);

  async function find(executor: Executor, accountId: string, invitationId: string) {
    const row = await store.findInvitation(executor, accountId, invitationId);
    if (!row) throw notFound('Invitation');
    return row;
  }

  return {
    async create(caller: Caller, accountId: string, input: { email: string; role: AssignableRole }) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      const email = normalizeEmail(input.email);
      const row = await inTransaction(db, async (trx) => {
        const account = await liveAccount(trx, accountId);
        const inviterName = await inviterLabel(trx, actor);
        const nowIso = clock.now().toISOString();
        const found = await deps.identity.findUserByEmail(email, trx);
        const existing = found ? await store.findMember(trx, accountId, found.id) : undefined;
        if (existing?.status === 'active') throw conflict('This person is already a member of the account');
        // Only a confirmed address ties the invitation to a user now (seat hold, notification);
        // an unconfirmed one is treated like an address without a user.
        const user = confirmedUser(found);
        const pending = await store.findLivePendingInvitation(trx, accountId, email, nowIso);
        if (pending) throw conflict('This email already has a pending invitation; resend it instead');
        await checkQuotas(trx, accountId, email);
        // An expired invitation to the same email is superseded: one pending invitation per
        // email, so revoking the old one can never take the new one's invited hold with it.
        await store.revokePendingInvitationsTo(trx, accountId, email, nowIso);
        const id = newId();
        const accountName = account.display_name ?? account.legal_name;
        const issued = await send(trx, {
          invitationId: id,
          accountName,
          email,
          role: input.role,
          userId: user?.id ?? null,
          inviterName,
        });
        const inviter = actor?.userId ?? 'system';
        const invitation = {
          id,
          account_id: accountId,
          email,
          role: input.role,
          status: 'pending',
          invited_by: inviter,
          token_id: issued.id,
          sent_count: 1,
          created_at: nowIso,
          expires_at: new Date(clock.now().getTime() + INVITATION_TTL_SEC * 1000).toISOString(),
          accepted_at: null,
          accepted_by: null,
          revoked_at: null,
        };
        await store.insertInvitation(trx, invitation);
        if (existing) {
          // An earlier invitation's hold: it now stands for this one.
          await store.updateMember(trx, accountId, existing.user_id, {
            role: input.role,
            invited_by: actor?.userId ?? null,
          });
        } else if (user) {
          await store.insertMember(trx, {
            account_id: accountId,
            user_id: user.id,
            role: input.role,
            status: 'invited',
            invited_by: actor?.userId ?? null,
            joined_at: null,
            created_at: nowIso,
          });
        }
        await audit(trx, actor, {
          accountId,
          action: 'member.invited',
          targetId: email,
          metadata: { invitationId: id, email, role: input.role, existingUser: !!user },
        });
        return invitation;
      });
      void mailer.deliverPending();
      return presentInvitation(row, clock.now());
    },

    async list(caller: Caller, accountId: string, limit: number, offset: number) {
      await authorize(caller, accountId, OWNER_OR_ADMIN);
      const [rows, total] = await Promise.all([
        store.listInvitations(db, accountId, limit, offset),
        store.countInvitations(db, accountId),
      ]);
      const now = clock.now();
      return { items: rows.map((r) => presentInvitation(r, now)), total };
    },

    /** Pending invitations only; the invited membership (if any) goes with it. */
    async revoke(caller: Caller, accountId: string, invitationId: string) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      const row = await inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const invitation = await find(trx, accountId, invitationId);
        if (invitation.status !== 'pending')
          throw conflict(`The invitation is ${invitation.status}; only pending invitations can be revoked`);
        const nowIso = clock.now().toISOString();
        await store.updateInvitation(trx, invitation.id, { status: 'revoked', revoked_at: nowIso });
        const user = await deps.identity.findUserByEmail(invitation.email, trx);
        if (user) await store.deleteInvitedMember(trx, accountId, user.id);
        await audit(trx, actor, {
          accountId,
          action: 'invitation.revoked',
          targetId: invitation.id,
          metadata: { email: invitation.email, role: invitation.role },
        });
        return { ...invitation, status: 'revoked', revoked_at: nowIso };
      });
      return presentInvitation(row, clock.now());
    },

    /** A new link (the previous one stops working) and a fresh 7-day period; expired ones may be resent. */
    async resend(caller: Caller, accountId: string, invitationId: string) {
      const { actor } = await authorize(caller, accountId, OWNER_OR_ADMIN);
      const row = await inTransaction(db, async (trx) => {
        const account = await liveAccount(trx, accountId);
        const invitation = await find(trx, accountId, invitationId);
        if (invitation.status !== 'pending')
          throw conflict(`The invitation is ${invitation.status}; only pending invitations can be resent`);
        const inviterName = await inviterLabel(trx, actor);
        await checkQuotas(trx, accountId, invitation.email);
        const user = confirmedUser(await deps.identity.findUserByEmail(invitation.email, trx));
        const issued = await send(trx, {
          invitationId: invitation.id,
          accountName: account.display_name ?? account.legal_name,
          email: invitation.email,
          role: invitation.role,
          userId: user?.id ?? null,
          inviterName,
        });
        const expiresAt = new Date(clock.now().getTime() + INVITATION_TTL_SEC * 1000).toISOString();
        const sentCount = await store.recordInvitationResent(trx, invitation.id, {
          token_id: issued.id,
          expires_at: expiresAt,
        });
        await audit(trx, actor, {
          accountId,
          action: 'invitation.resent',
          targetId: invitation.id,
          metadata: { email: invitation.email, role: invitation.role, sentCount },
        });
        return { ...invitation, token_id: issued.id, expires_at: expiresAt, sent_count: sentCount };
      });
      void mailer.deliverPending();
      return presentInvitation(row, clock.now());
    },

    ...createInvitationAcceptance(deps),
  };
}
