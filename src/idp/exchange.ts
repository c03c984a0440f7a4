import type { JWTVerifyGetKey } from 'jose';
import { inTransaction, type Executor } from '../db/tx.js';
import { DomainError } from '../http/errors.js';
import { userPrincipal, type Principal } from '../http/auth.js';
import type { Kernel } from '../kernel.js';
import type { AuditService } from '../audit/service.js';
import type { AcceptedAssertion, IdentityAssertions } from '../oauth/grants/jwt-bearer.js';
import { AssertionRefused, verifyIdJag } from './id-jag.js';
import * as store from './store.js';

/** What the exchange needs of the accounts service: a user's workspace in an account. */
export interface WorkspaceFinder {
  access: {
    workspace(
      principal: Principal,
      headers: { accountId?: string | null; workspaceId?: string | null },
    ): Promise<{ accountId: string; workspaceId: string }>;
  };
}

/**
 * The enterprise identity side of the ID-JAG grant (src/oauth/grants/jwt-bearer.ts): the
 * checks (id-jag.ts), the workspace the token is bound to (the user's default workspace in the
 * IdP's account, or in their current account when the IdP is bound to none), and the audit of
 * every exchange, accepted or refused (docs/identity-providers.md, ID-JAG). The assertion
 * itself is never written anywhere (the MCP extension, 7.4.2).
 */
export function createIdJagExchange(deps: {
  kernel: Kernel;
  audit: AuditService;
  accounts: WorkspaceFinder;
  keysOf(idp: store.IdpRow): Promise<JWTVerifyGetKey>;
}): IdentityAssertions {
  const { db, clock, logger } = deps.kernel;

  async function workspaceOf(userId: string, accountId: string | null, workspaceId: string | null) {
    try {
      const found = await deps.accounts.access.workspace(userPrincipal(userId), { accountId, workspaceId });
      // The operator's workspace is one of the IdP's account (checked by `idp add`); never another.
      return workspaceId && found.accountId !== accountId ? null : found;
    } catch (err) {
      if (err instanceof DomainError && (err.status === 403 || err.status === 404)) return null;
      throw err;
    }
  }

  /** The refusal in the log, and in the IdP's account's audit log when it is bound to one. */
  async function recordRefusal(idpId: string | null, clientId: string, reason: string, userId?: string) {
    logger.warn('id-jag refused', { idpId, clientId, reason });
    const idp = idpId === null ? null : await store.findIdp(db, idpId);
    if (!idp?.account_id) return;
    const accountId = idp.account_id;
    await inTransaction(db, (trx) =>
      deps.audit.record(trx, null, {
        accountId,
        action: 'idp.assertion_refused',
        targetId: idp.id,
        metadata: { idpId: idp.id, clientId, reason, ...(userId ? { userId } : {}) },
      }),
    );
  }

  return {
    async verify(assertion, context) {
      let verified;
      try {
        verified = await verifyIdJag({ db, clock, keysOf: deps.keysOf }, assertion, context);
      } catch (err) {
        if (!(err instanceof AssertionRefused)) throw err;
        await recordRefusal(err.idpId, context.clientId, err.message);
        return { refused: err.message };
      }
      const workspace = await workspaceOf(verified.userId, verified.accountId, verified.workspaceId);
      if (!workspace) {
        const reason = verified.workspaceId
          ? "The assertion's user may not use the workspace the identity provider's rule names (not a member of it, or it is gone)"
          : verified.accountId
            ? "The assertion's user is not an active member of the identity provider's account"
            : "The assertion's user belongs to no account";
        await recordRefusal(verified.idpId, context.clientId, reason, verified.userId);
        return { refused: reason };
      }
      const accepted: AcceptedAssertion = {
        idpId: verified.idpId,
        userId: verified.userId,
        workspaceId: workspace.workspaceId,
        scopes: verified.scopes,
        accountId: workspace.accountId,
        subject: verified.subject,
        jti: verified.jti,
      };
      return { accepted };
    },

    async exchanged(trx: Executor, accepted, issued) {
      await store.recordIssued(trx, accepted.idpId, 'grant', issued.grantId, clock.now().toISOString());
      await deps.audit.record(
        trx,
        { userId: accepted.userId },
        {
          accountId: accepted.accountId,
          action: 'idp.assertion_exchanged',
          targetId: issued.grantId,
          metadata: {
            idpId: accepted.idpId,
            clientId: issued.clientId,
            subject: accepted.subject,
            jti: accepted.jti,
            workspaceId: accepted.workspaceId,
            scopes: issued.scopes,
          },
        },
      );
      logger.info('id-jag exchanged', { idpId: accepted.idpId, clientId: issued.clientId, grantId: issued.grantId });
    },

    refused: (accepted, clientId, reason) => recordRefusal(accepted.idpId, clientId, reason, accepted.userId),
  };
}
