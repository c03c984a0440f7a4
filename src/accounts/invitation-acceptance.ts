import { conflict, DomainError, forbidden } from '../http/errors.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { hashPassword } from '../lib/crypto.js';
import { liveAccount, type AccountsDeps } from './context.js';
import { emailNotConfirmed, INVITATION_PURPOSE } from './invitation-mail.js';
import { presentMember } from './presenters.js';
import * as store from './store/index.js';

/** The row behind a live invitation link. */
type InvitationRow = NonNullable<Awaited<ReturnType<typeof store.findInvitationById>>>;

const gone = () =>
  new DomainError(
    'GONE',
    'This invitation link is invalid, was already used, was replaced by a newer one, or has expired',
  );

/** What the invitation page shows once the link checks out (docs/accounts.md, Invitation). */
export interface InvitationSummary {
  accountName: string;
  /** As the mail names them: full name, else username, else email; "An administrator" for the operator. */
  inviterName: string;
  email: string;
  role: string;
  expiresAt: string;
  /** Whether a user has the invited email already: the page then offers sign-in, else registration. */
  userExists: boolean;
}

/**
 * The invitee's side of an invitation: the link looked at (the page names the account and the
 * inviter to whoever holds it: the mailbox the link was sent to), accepted by a signed-in user,
 * or accepted while registering with the invited address.
 */
export function createInvitationAcceptance(deps: AccountsDeps) {
  const { db, clock, config } = deps.kernel;
  const audit = deps.audit.record;

  /** The pending invitation a live link stands for; 410 for anything else. */
  async function invitationOf(executor: Executor, secret: string, use: 'peek' | 'consume') {
    const token = await deps.identity.oneTimeTokens[use](executor, INVITATION_PURPOSE, secret);
    if (!token) throw gone();
    const invitation = await store.findInvitationById(executor, String(token.payload.invitationId ?? ''));
    if (
      !invitation ||
      invitation.status !== 'pending' ||
      invitation.token_id !== token.id ||
      invitation.expires_at <= clock.now().toISOString()
    )
      throw gone();
    return invitation;
  }

  /** Makes the user an active member (in the default workspace too) and closes the invitation. */
  async function join(trx: Executor, invitation: InvitationRow, userId: string) {
    const nowIso = clock.now().toISOString();
    const accountId = invitation.account_id;
    await liveAccount(trx, accountId);
    const existing = await store.findMember(trx, accountId, userId);
    if (existing?.status === 'active') throw conflict('You are already a member of this account');
    const invitedBy = invitation.invited_by === 'system' ? null : invitation.invited_by;
    if (existing) {
      await store.updateMember(trx, accountId, userId, { status: 'active', role: invitation.role, joined_at: nowIso });
    } else {
      await store.insertMember(trx, {
        account_id: accountId,
        user_id: userId,
        role: invitation.role,
        status: 'active',
        invited_by: invitedBy,
        joined_at: nowIso,
        created_at: nowIso,
      });
    }
    await store.joinDefaultWorkspace(trx, accountId, userId, 'member', nowIso);
    await store.updateInvitation(trx, invitation.id, { status: 'accepted', accepted_at: nowIso, accepted_by: userId });
    const actor = { userId };
    const metadata = { email: invitation.email, role: invitation.role };
    await audit(trx, actor, { accountId, action: 'invitation.accepted', targetId: invitation.id, metadata });
    await audit(trx, actor, {
      accountId,
      action: 'member.joined',
      targetId: userId,
      metadata: { role: invitation.role, invitationId: invitation.id },
    });
    return presentMember((await store.findMember(trx, accountId, userId))!);
  }

  return {
    /** 410 unless the link is live; uses nothing (the page checks it before any password). */
    async check(secret: string): Promise<void> {
      await invitationOf(db, secret, 'peek');
    },

    /** What a live link invites to (410 otherwise); uses nothing. */
    async describe(secret: string): Promise<InvitationSummary> {
      const invitation = await invitationOf(db, secret, 'peek');
      const account = await liveAccount(db, invitation.account_id);
      const inviter =
        invitation.invited_by === 'system' ? null : await deps.identity.findUserById(invitation.invited_by);
      return {
        accountName: account.display_name ?? account.legal_name,
        inviterName: inviter ? (inviter.full_name ?? inviter.username ?? inviter.email) : 'An administrator',
        email: invitation.email,
        role: invitation.role,
        expiresAt: invitation.expires_at,
        userExists: !!(await deps.identity.findUserByEmail(invitation.email)),
      };
    },

    /**
     * The signed-in invitee accepts: the link is consumed, the membership becomes (or is
     * created) active in the default workspace. It takes the mailed link and a user whose
     * confirmed email is the invited one. Any refusal rolls back, link included, so signing in
     * as the wrong person (or before confirming) does not burn the invitation.
     */
    async accept(userId: string, secret: string) {
      return inTransaction(db, async (trx) => {
        const invitation = await invitationOf(trx, secret, 'consume');
        const user = await deps.identity.getUser(userId, trx);
        if (user.email !== invitation.email)
          throw forbidden(
            `This invitation was sent to another email address; sign in as ${invitation.email} to accept it`,
          );
        if (!user.email_verified_at)
          throw emailNotConfirmed(
            'Confirm your email address first (use the confirmation mail, or ask for a new one), then accept the invitation',
          );
        return join(trx, invitation, userId);
      });
    },

    /**
     * Registers the invited address and accepts, in one transaction (docs/accounts.md,
     * Invitation): the link was mailed to that address, so using it confirms the address, as a
     * sign-in link does. Only for an address no user has yet (409 otherwise: sign in instead).
     */
    async register(secret: string, input: { password: string; fullName: string | null }) {
      // scrypt before the transaction: it must never hold the one connection.
      const passwordHash = await hashPassword(input.password, config.scryptCost);
      return inTransaction(db, async (trx) => {
        const invitation = await invitationOf(trx, secret, 'consume');
        if (await deps.identity.findUserByEmail(invitation.email, trx))
          throw conflict('An account with this email exists already: sign in to accept the invitation');
        const user = await deps.identity.createUser(
          { email: invitation.email, passwordHash, fullName: input.fullName, verified: true },
          trx,
        );
        return { userId: user.id, member: await join(trx, invitation, user.id) };
      });
    },
  };
}
