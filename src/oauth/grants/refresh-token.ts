import { inTransaction } from '../../db/tx.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { Kernel } from '../../kernel.js';
import type { Client } from '../types.js';
import type { GrantMeter } from '../endpoint-limits.js';
import { invalidGrant, invalidRequest, invalidScope, invalidTarget, type OAuthError } from '../errors.js';
import { BUSY, type HotRefreshRow } from '../hot-store.js';
import type { ResourceKind } from '../resources.js';
import { formatScope, isSubset, parseScope } from '../scopes.js';
import type { OAuthTokens, TokenResponse } from '../tokens.js';
import * as store from '../store/index.js';

type Outcome =
  | { tokens: TokenResponse }
  | { error: string }
  | { scopeError: string }
  | { targetError: string }
  | { reuse: HotRefreshRow }
  | { refused: OAuthError };

/** The rules before the token is consumed; null means "go on and consume it". */
function precheck(
  row: HotRefreshRow | undefined,
  client: Client,
  requested: string[] | null,
  target: ResourceKind | null,
): Outcome | null {
  if (!row) return { error: 'The refresh token is invalid' };
  // Another client's token: refused, and its family left alone (docs/interface.md, OAuth).
  if (row.client_id !== client.id) return { error: 'The refresh token was issued to another client' };
  if (row.revoked_at !== null) return { error: 'The refresh token was revoked' };
  if (row.consumed_at !== null) return { reuse: row };
  // Checked before the token is consumed, so a refused narrowing does not cost the client its token.
  if (requested && !isSubset(requested, row.scopes.split(' ')))
    return { scopeError: 'The requested scope exceeds the one granted' };
  // A grant's tokens are all for its one resource (RFC 8707 2.2): kept, never switched.
  if (target !== null && target !== row.resource)
    return { targetError: 'resource differs from the one this authorization was granted for' };
  return null;
}

/**
 * grant_type=refresh_token (RFC 6749 6) with rotation (RFC 9700 4.14.2): every use consumes
 * the token; a consumed one shown again revokes the whole family, access tokens included.
 * No grace window (docs/interface.md, OAuth). The consume is conditional and runs in a transaction that
 * nothing interleaves with, so of N simultaneous uses exactly one wins and the others are
 * reuse. On SQLite the usual case runs synchronously over prepared statements in a
 * group-committed transaction (hot-store.ts); while a kysely transaction holds the connection
 * it takes the ordinary path instead. On PostgreSQL the service first tries a batch's
 * statement (refresh-batches.ts).
 */
export async function refreshTokenGrant(
  kernel: Kernel,
  tokens: OAuthTokens,
  client: Client,
  params: Record<string, string | undefined>,
  target: ResourceKind | null,
  meter: GrantMeter,
): Promise<TokenResponse> {
  const { refresh_token: refreshToken } = params;
  if (!refreshToken) throw invalidRequest('refresh_token is required');
  let requested: string[] | null = null;
  if (params.scope !== undefined) {
    requested = parseScope(params.scope);
    if (!requested) throw invalidScope('scope is malformed');
  }

  const { db, clock } = kernel;
  const tokenHash = sha256Hex(refreshToken);
  const finish = (row: HotRefreshRow, now: string, insert: Parameters<OAuthTokens['mint']>[2]): Outcome => {
    if (row.expires_at <= now) return { error: 'The refresh token has expired' };
    // The new refresh token keeps the whole grant; only this access token is narrowed (RFC 6749 6).
    const scope = requested ? formatScope(requested) : row.scopes;
    const ref = {
      id: row.grant_id,
      clientId: client.id,
      userId: row.user_id,
      resource: row.resource,
      workspaceId: row.workspace_id,
    };
    return { tokens: tokens.mint(ref, scope, insert) };
  };

  const { hot } = tokens;
  let outcome: Outcome | typeof BUSY = await hot.run((): Outcome => {
    const row = hot.findRefreshToken(tokenHash);
    const early = precheck(row, client, requested, target);
    if (early) return early;
    // Charged before the consume: a refused request keeps its token for the retry. The hot
    // path is SQLite's (one process), where the limiter counts in memory anyway.
    const refused = meter.inProcess(row!.user_id);
    if (refused) return { refused };
    const now = clock.now().toISOString();
    if (!hot.consumeRefreshToken(row!.id, now)) return { reuse: row! };
    return finish(row!, now, hot.insertRefreshToken);
  });
  if (outcome === BUSY) {
    outcome = await inTransaction<Outcome>(
      db,
      async (trx) => {
        const row = await store.findRefreshToken(trx, tokenHash);
        const early = precheck(row, client, requested, target);
        if (early) return early;
        const refused = await meter(row!.user_id);
        if (refused) return { refused };
        const now = clock.now().toISOString();
        if (!(await store.consumeRefreshToken(trx, row!.id, now))) return { reuse: row! };
        const rows: Array<Parameters<typeof store.insertRefreshToken>[1]> = [];
        const result = finish(row!, now, (r) => rows.push({ ...r, consumed_at: null }));
        for (const r of rows) await store.insertRefreshToken(trx, r);
        return result;
        // Exactly one use wins by the conditional consume itself: a concurrent one waits for the
        // row lock, finds it consumed and is a reuse (docs/postgres.md, Transactions).
      },
      { isolation: 'read committed' },
    );
  }

  if ('reuse' in outcome) throw await reuseDetected(kernel, tokens, client, outcome.reuse);
  if ('refused' in outcome) throw outcome.refused;
  if ('scopeError' in outcome) throw invalidScope(outcome.scopeError);
  if ('targetError' in outcome) throw invalidTarget(outcome.targetError);
  if ('error' in outcome) throw invalidGrant(outcome.error);
  return outcome.tokens;
}

/** A refresh token shown again: its whole family is revoked; the error to answer. */
export async function reuseDetected(
  kernel: Kernel,
  tokens: OAuthTokens,
  client: Client,
  row: { grant_id: string; user_id: string },
): Promise<OAuthError> {
  await inTransaction(kernel.db, (trx) => tokens.revokeGrant(trx, row.grant_id, 'refresh_token_reuse'));
  kernel.metrics
    .counter('gantry_oauth_refresh_reuse_total', 'Refresh tokens used twice (each revokes its authorization)')
    .inc();
  kernel.logger.warn('oauth refresh token reuse detected; family revoked', {
    clientId: client.id,
    grantId: row.grant_id,
    userId: row.user_id,
  });
  return invalidGrant('The refresh token was already used; the authorization is revoked');
}
