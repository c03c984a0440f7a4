import { inTransaction } from '../../db/tx.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { Kernel } from '../../kernel.js';
import type { Client } from '../clients.js';
import { invalidGrant, invalidRequest, invalidScope } from '../errors.js';
import { formatScope, isSubset, parseScope } from '../scopes.js';
import type { OAuthTokens, TokenResponse } from '../tokens.js';
import * as store from '../store.js';

type Outcome = { tokens: TokenResponse } | { error: string } | { scopeError: string };

/**
 * grant_type=refresh_token (RFC 6749 6) with rotation (RFC 9700 4.14.2): every use consumes
 * the token; a consumed one shown again revokes the whole family, access tokens included.
 * No grace window (CONTRACT.md). The transactions run one at a time on the single
 * connection and the consume is conditional, so of N simultaneous uses exactly one wins.
 */
export async function refreshTokenGrant(kernel: Kernel, tokens: OAuthTokens, client: Client, params: Record<string, string | undefined>): Promise<TokenResponse> {
  const { refresh_token: refreshToken } = params;
  if (!refreshToken) throw invalidRequest('refresh_token is required');
  let requested: string[] | null = null;
  if (params.scope !== undefined) {
    requested = parseScope(params.scope);
    if (!requested) throw invalidScope('scope is malformed');
  }

  const { db, clock, logger } = kernel;
  const tokenHash = sha256Hex(refreshToken);
  const outcome = await inTransaction<Outcome>(db, async (trx) => {
    const row = await store.findRefreshToken(trx, tokenHash);
    if (!row) return { error: 'The refresh token is invalid' };
    // Another client's token: refused, and its family left alone (CONTRACT.md).
    if (row.client_id !== client.id) return { error: 'The refresh token was issued to another client' };
    if (row.revoked_at !== null) return { error: 'The refresh token was revoked' };
    const granted = row.scopes.split(' ');
    // Checked before the token is consumed, so a refused narrowing does not cost the client its token.
    if (requested && row.consumed_at === null && !isSubset(requested, granted)) return { scopeError: 'The requested scope exceeds the one granted' };
    const now = clock.now().toISOString();
    if (row.consumed_at !== null || !(await store.consumeRefreshToken(trx, row.id, now))) {
      await tokens.revokeGrant(trx, row.grant_id, 'refresh_token_reuse');
      logger.warn('oauth refresh token reuse detected; family revoked', { clientId: client.id, grantId: row.grant_id, userId: row.user_id });
      return { error: 'The refresh token was already used; the authorization is revoked' };
    }
    if (row.expires_at <= now) return { error: 'The refresh token has expired' };
    // The new refresh token keeps the whole grant; only this access token is narrowed (RFC 6749 6).
    const scope = requested ? formatScope(requested) : row.scopes;
    return { tokens: await tokens.issue(trx, { id: row.grant_id, clientId: client.id, userId: row.user_id }, scope) };
  });
  if ('scopeError' in outcome) throw invalidScope(outcome.scopeError);
  if ('error' in outcome) throw invalidGrant(outcome.error);
  return outcome.tokens;
}
