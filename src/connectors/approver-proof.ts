import type { AccountAccess } from '../accounts/access.js';
import { DomainError } from '../http/errors.js';
import type { Actor } from './types.js';

/**
 * What identity tells about a session's second factor (src/identity/second-factors.ts,
 * proofOf): the composition root passes it in, so connectors never imports identity.
 */
export interface SecondFactorProofs {
  proofOf(
    userId: string,
    sessionId: string | null,
  ): Promise<{ hasSecondFactor: boolean; methods: readonly string[]; recent: boolean }>;
}

/** Where an approver stands: may decide, must prove a factor again, or must first set one up. */
export type ApproverStanding = 'ready' | 'step_up' | 'enrol';

/**
 * The step-up rule of approvals (docs/connectors.md, Approver step-up): an approver who has a
 * second factor decides only from a session that proved it within the last 5 minutes; where
 * the account's owner requires it, an approver without one does not decide at all. Every door
 * (the REST endpoints and the approval page) asks this before deciding.
 */
export function createApproverProof(access: AccountAccess, proofs: SecondFactorProofs) {
  async function standing(actor: Actor): Promise<{ standing: ApproverStanding; methods: readonly string[] }> {
    const proof = await proofs.proofOf(actor.principal.userId, actor.principal.sessionId);
    if (proof.hasSecondFactor) return { standing: proof.recent ? 'ready' : 'step_up', methods: proof.methods };
    const required = await access.approversNeedSecondFactor(actor.ws.accountId);
    return { standing: required ? 'enrol' : 'ready', methods: [] };
  }

  return {
    standing,

    async assert(actor: Actor): Promise<void> {
      const { standing: where, methods } = await standing(actor);
      if (where === 'step_up')
        throw new DomainError(
          'STEP_UP_REQUIRED',
          'Deciding a tool call needs a second factor proved within the last 5 minutes: POST /auth/step-up with a code or a passkey, then try again',
          { methods, stepUpUrl: '/api/v1/auth/step-up' },
        );
      if (where === 'enrol')
        throw new DomainError(
          'SECOND_FACTOR_REQUIRED',
          "This account's owner requires approvers to have a second factor: turn on two-step sign-in or add a passkey in your account center",
          { accountCenterUrl: '/account' },
        );
    },
  };
}

export type ApproverProof = ReturnType<typeof createApproverProof>;
