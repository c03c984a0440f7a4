import { DomainError } from '../http/errors.js';
import type { Executor } from '../db/tx.js';
import { oneLine } from '../lib/text.js';
import type { AccountsDeps, Actor } from './context.js';

export const INVITATION_PURPOSE = 'account_invitation';
/** An invitation link is valid for 7 days; a resend issues a new link and restarts the period. */
export const INVITATION_TTL_SEC = 7 * 24 * 3600;

/**
 * Invitation mails in a day: from one account to one address (first sends and resends alike),
 * to one address from all accounts together, and from one account in all. The per-address
 * count is per account so that a throwaway account cannot spend an address's day and lock
 * out the real inviter; the higher total still stops spraying one address from many accounts
 * (docs/accounts.md, Invitation). Counted from the audit log and the outbox, so they hold
 * across restarts and processes.
 */
const INVITATION_MAIL_QUOTAS = {
  perRecipient: 3,
  perRecipientAllAccounts: 10,
  perAccount: 50,
  windowSec: 24 * 3600,
} as const;
/** The audit actions that each stand for one invitation mail; their metadata names the address. */
const INVITATION_MAIL_ACTIONS = ['member.invited', 'invitation.resent'] as const;

/**
 * 403 `FORBIDDEN` for an action that needs a confirmed address; the detail's type lets a client
 * tell it from other refusals without a code of its own (docs/accounts.md, Invitation).
 */
export const emailNotConfirmed = (message: string) =>
  new DomainError('FORBIDDEN', message, [
    { field: 'email', message: 'the email address is not confirmed', type: 'email_not_confirmed' },
  ]);
/** Longest name put into an invitation mail (subject and body). */
const MAIL_NAME_MAX = 80;

/**
 * The invitation mail: the link it carries, who signs it, and the daily quotas on sending it.
 * The link's secret goes to the mailbox only (docs/accounts.md, Invitation).
 */
export function createInvitationMail(deps: AccountsDeps) {
  const { clock, config, mailer } = deps.kernel;

  const brand = config.brand.name;
  const link = (secret: string) => `${config.publicUrl}/invitations/accept?token=${encodeURIComponent(secret)}`;

  /**
   * Issues a link, mails it and (for a user with the confirmed address) notifies in-app; all in
   * the caller's transaction. The notification only says an invitation is waiting in the mail:
   * it never carries the link, which alone would let a signed-in reader accept.
   */
  async function send(
    trx: Executor,
    raw: {
      invitationId: string;
      accountName: string;
      email: string;
      role: string;
      userId: string | null;
      inviterName: string;
    },
  ) {
    // The mail is plain text and the names are chosen by whoever invites: one line each, capped,
    // so they cannot add paragraphs or headers of their own.
    const input = {
      ...raw,
      accountName: oneLine(raw.accountName, MAIL_NAME_MAX),
      inviterName: oneLine(raw.inviterName, MAIL_NAME_MAX),
    };
    const issued = await deps.identity.oneTimeTokens.issue(trx, {
      userId: input.userId,
      purpose: INVITATION_PURPOSE,
      ttlSec: INVITATION_TTL_SEC,
      payload: { invitationId: input.invitationId },
    });
    const url = link(issued.secret);
    await mailer.enqueue(trx, {
      to: input.email,
      subject: `Invitation to join "${input.accountName}" on ${brand}`,
      text: `${input.inviterName} invited you to join the account "${input.accountName}" on ${brand} as ${input.role}.\n\nAccept the invitation (sign in as ${input.email}, or create your account with that address): ${url}\n\nThe link can be used once and expires in 7 days. If you do not know this account, ignore this mail.`,
      kind: 'invitation',
    });
    if (input.userId) {
      await deps.notifications.notify(trx, {
        userId: input.userId,
        title: `Invitation to ${input.accountName}`,
        body: `${input.inviterName} invited you to join ${input.accountName} as ${input.role}. Open the link in the invitation mail sent to ${input.email} to accept.`,
        category: 'account',
        priority: 'normal',
      });
    }
    return issued;
  }

  /**
   * Who signs the mail, refused unless their own address is confirmed: an invitation mail
   * carries the inviter's words to a stranger's mailbox. The operator's CLI (no actor) may send.
   */
  const inviterLabel = async (trx: Executor, actor: Actor) => {
    if (!actor) return 'An administrator';
    const user = await deps.identity.getUser(actor.userId, trx);
    if (!user.email_verified_at) throw emailNotConfirmed('Confirm your email address before sending invitations');
    return user.full_name ?? user.username ?? user.email;
  };

  /** 429 when the recipient or the account has had its invitation mails for the day. */
  async function checkQuotas(trx: Executor, accountId: string, email: string) {
    const now = clock.now().getTime();
    const since = new Date(now - INVITATION_MAIL_QUOTAS.windowSec * 1000).toISOString();
    const refuse = (
      message: string,
      quota: 'recipient' | 'recipientAllAccounts' | 'account',
      limit: number,
      oldest: string | null,
    ) => {
      const retryAfter = oldest
        ? Math.max(1, Math.ceil((Date.parse(oldest) + INVITATION_MAIL_QUOTAS.windowSec * 1000 - now) / 1000))
        : INVITATION_MAIL_QUOTAS.windowSec;
      return new DomainError(
        'RATE_LIMIT_EXCEEDED',
        message,
        { quota, limit, windowSec: INVITATION_MAIL_QUOTAS.windowSec },
        { 'Retry-After': String(retryAfter) },
      );
    };
    const fromAccountToRecipient = await deps.audit.countSince(trx, accountId, INVITATION_MAIL_ACTIONS, since, email);
    if (fromAccountToRecipient.count >= INVITATION_MAIL_QUOTAS.perRecipient) {
      throw refuse(
        `This account has sent ${INVITATION_MAIL_QUOTAS.perRecipient} invitation mails to this address in the last 24 hours; try again later`,
        'recipient',
        INVITATION_MAIL_QUOTAS.perRecipient,
        fromAccountToRecipient.oldest,
      );
    }
    const toRecipient = await mailer.queuedSince(trx, email, 'invitation', since);
    if (toRecipient.count >= INVITATION_MAIL_QUOTAS.perRecipientAllAccounts) {
      throw refuse(
        `This address has received ${INVITATION_MAIL_QUOTAS.perRecipientAllAccounts} invitation mails in the last 24 hours; try again later`,
        'recipientAllAccounts',
        INVITATION_MAIL_QUOTAS.perRecipientAllAccounts,
        toRecipient.oldest,
      );
    }
    const fromAccount = await deps.audit.countSince(trx, accountId, INVITATION_MAIL_ACTIONS, since);
    if (fromAccount.count >= INVITATION_MAIL_QUOTAS.perAccount) {
      throw refuse(
        `This account has sent ${INVITATION_MAIL_QUOTAS.perAccount} invitation mails in the last 24 hours; try again later`,
        'account',
        INVITATION_MAIL_QUOTAS.perAccount,
        fromAccount.oldest,
      );
    }
  }

  return { send, inviterLabel, checkQuotas };
}
