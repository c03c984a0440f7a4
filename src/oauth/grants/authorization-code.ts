import { afterCommit, inTransaction } from '../../db/tx.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { Kernel } from '../../kernel.js';
import type { Client } from '../types.js';
import type { GrantMeter } from '../endpoint-limits.js';
import { invalidGrant, invalidRequest, invalidScope, invalidTarget, type OAuthError } from '../errors.js';
import { isWellFormedVerifier, verifyS256 } from '../pkce.js';
import { type ResourceKind } from '../resources.js';
import type { OAuthTokens, TokenResponse } from '../tokens.js';
import * as store from '../store/index.js';

type Outcome =
  | { tokens: TokenResponse }
  | { error: string }
  | { scopeError: string }
  | { targetError: string }
  | { refused: OAuthError };

/**
 * grant_type=authorization_code (RFC 6749 4.1.3, RFC 7636 4.5-4.6). The code is single-use:
 * any presentation consumes it, and a replay revokes everything issued from it (4.1.2,
 * RFC 9700 4.5). A code shown by another client is consumed too: it has leaked (docs/interface.md, OAuth).
 * The tokens are for the resource chosen at authorize; a `resource` naming another one is
 * `invalid_target` (RFC 8707 2.2; `target` is the parsed parameter, null when absent).
 */
export async function authorizationCodeGrant(
  kernel: Kernel,
  tokens: OAuthTokens,
  client: Client,
  params: Record<string, string | undefined>,
  target: ResourceKind | null,
  meter: GrantMeter,
): Promise<TokenResponse> {
  const { code, redirect_uri: redirectUri, code_verifier: verifier } = params;
  if (!code) throw invalidRequest('code is required');
  if (!redirectUri) throw invalidRequest('redirect_uri is required');
  if (!verifier) throw invalidRequest('code_verifier is required');
  if (!isWellFormedVerifier(verifier))
    throw invalidRequest('code_verifier must be 43 to 128 characters from A-Z a-z 0-9 - . _ ~');

  const { db, clock, logger } = kernel;
  const codeHash = sha256Hex(code);
  const outcome = await inTransaction<Outcome>(db, async (trx) => {
    const row = await store.findCode(trx, codeHash);
    if (!row) return { error: 'The authorization code is invalid' };
    const now = clock.now();
    if (!(await store.consumeCode(trx, codeHash, now.toISOString()))) {
      await tokens.revokeGrant(trx, row.grant_id, 'code_replayed');
      // Logged once it commits: a retried attempt would log it again (docs/postgres.md, Transactions).
      afterCommit(trx, () =>
        logger.warn('oauth authorization code replayed; its grant is revoked', {
          clientId: row.client_id,
          grantId: row.grant_id,
          presentedBy: client.id,
        }),
      );
      return { error: 'The authorization code was already used' };
    }
    if (row.client_id !== client.id) {
      await tokens.revokeGrant(trx, row.grant_id, 'code_wrong_client');
      afterCommit(trx, () =>
        logger.warn('oauth authorization code presented by another client; consumed', {
          clientId: row.client_id,
          presentedBy: client.id,
        }),
      );
      return { error: 'The authorization code was issued to another client' };
    }
    if (row.expires_at <= now.toISOString()) return { error: 'The authorization code has expired' };
    if (row.redirect_uri !== redirectUri)
      return { error: 'redirect_uri does not match the one of the authorization request' };
    if (!verifyS256(verifier, row.code_challenge)) return { error: 'PKCE verification failed' };
    const grant = await store.findGrant(trx, row.grant_id);
    if (!grant || grant.revoked_at !== null) return { error: 'The authorization was revoked' };
    if (target !== null && target !== grant.resource)
      return { targetError: 'resource differs from the one of the authorization request' };
    // Only a user's own sign-ins make codes, so this limit is out of reach of a real client;
    // the code is spent either way (single use).
    const refused = await meter(grant.user_id);
    if (refused) return { refused };
    const ref = {
      id: grant.id,
      clientId: client.id,
      userId: grant.user_id,
      resource: grant.resource,
      workspaceId: grant.workspace_id,
    };
    return { tokens: await tokens.issue(trx, ref, row.scopes) };
  });
  if ('refused' in outcome) throw outcome.refused;
  if ('error' in outcome) throw invalidGrant(outcome.error);
  if ('scopeError' in outcome) throw invalidScope(outcome.scopeError);
  if ('targetError' in outcome) throw invalidTarget(outcome.targetError);
  return outcome.tokens;
}
