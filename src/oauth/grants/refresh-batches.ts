import { sha256Hex } from '../../lib/crypto.js';
import type { Kernel } from '../../kernel.js';
import type { Client } from '../types.js';
import type { StatementCharge } from '../endpoint-limits.js';
import type { OAuthError } from '../errors.js';
import type { ResourceKind } from '../resources.js';
import { formatScope, parseScope } from '../scopes.js';
import type { OAuthTokens, TokenResponse } from '../tokens.js';
import * as store from '../store/index.js';
import { reuseDetected } from './refresh-token.js';

/** One refresh waiting for its batch. */
interface Pending {
  /** Null when the client failed to authenticate: only its address's budget is read. */
  client: Client | null;
  tokenHash: string;
  requested: string[] | null;
  target: ResourceKind | null;
  charge: StatementCharge;
  resolve(value: TokenResponse | null): void;
  reject(err: unknown): void;
}

/**
 * PostgreSQL's refresh grant for its usual case (docs/postgres.md, Transactions): the refreshes
 * that arrive during one turn of the event loop run as one statement
 * (store.rotateRefreshTokensStatement), one round trip and one commit for all of them, as
 * SQLite's hot store commits them together (hot-store.ts). Each gets what it would have got
 * alone: the budgets, the meter's count in arrival order, and at most one use of a token.
 */
export function createRefreshBatches(kernel: Kernel, tokens: OAuthTokens) {
  const { db, clock } = kernel;
  let statement: ReturnType<typeof store.rotateRefreshTokensStatement> | null = null;
  let queue: Pending[] = [];
  const sizes = kernel.metrics.histogram(
    'gantry_oauth_refresh_batch_size',
    'Refresh grants answered by one statement (PostgreSQL)',
    [],
    [1, 2, 4, 8, 16, 32, 64],
  );

  /** One refresh's answer from its row: the tokens, a throw (429, reuse), or null to go the ordinary way. */
  async function answer(item: Pending, row: store.RotationRow, next: { token: string }): Promise<TokenResponse | null> {
    const window = (count: number | null, resetAtMs: number | null) =>
      count === null || resetAtMs === null ? null : { count, resetAtMs };
    const { client } = item;
    const spent = item.charge.refuseSpent(
      window(row.address_count, row.address_reset_at_ms),
      client ? window(row.failures_count, row.failures_reset_at_ms) : null,
    );
    if (spent) throw spent;
    if (client === null || row.id === null || row.user_id === null || row.grant_id === null) return null;
    const refused: OAuthError | null = item.charge.settle({
      count: Number(row.meter_count),
      resetAtMs: Number(row.meter_reset_at_ms),
    });
    if (refused) throw refused;
    // Consumed by another use, in this batch or another statement: this one is a reuse.
    if (!row.rotated)
      throw await reuseDetected(kernel, tokens, client, { grant_id: row.grant_id, user_id: row.user_id });
    const grant = {
      id: row.grant_id,
      clientId: client.id,
      userId: row.user_id,
      resource: row.resource as ResourceKind,
      workspaceId: row.workspace_id,
    };
    // The new refresh token keeps the whole grant; only this access token is narrowed (RFC 6749 6).
    const scope = item.requested ? formatScope(item.requested) : (row.scopes as string);
    return tokens.respond(grant, scope, next.token);
  }

  async function flush(): Promise<void> {
    const batch = queue;
    queue = [];
    sizes.observe(batch.length);
    let rows: store.RotationRow[];
    let next: Array<ReturnType<OAuthTokens['newRefreshToken']>>;
    try {
      const now = clock.now();
      next = batch.map(() => tokens.newRefreshToken(now));
      const limits = batch[0].charge.values;
      statement ??= store.rotateRefreshTokensStatement(db);
      ({ rows } = await db.executeQuery(
        statement({
          tokenHashes: batch.map((item) => item.tokenHash),
          clientIds: batch.map((item) => item.client?.id ?? null),
          requested: batch.map((item) => (item.requested ? item.requested.join(' ') : null)),
          resources: batch.map((item) => item.target),
          addressBuckets: batch.map((item) => item.charge.values.addressBucket),
          failuresBuckets: batch.map((item) => item.charge.values.failuresBucket),
          meterBucketPrefixes: batch.map((item) => item.charge.values.meterBucketPrefix),
          nextTokenHashes: next.map((fresh) => fresh.row.token_hash),
          at: next[0].row.created_at,
          nextExpiresAt: next[0].row.expires_at,
          nowMs: now.getTime(),
          addressLimit: limits.addressLimit,
          failuresLimit: limits.failuresLimit,
          meterLimit: limits.meterLimit,
          meterResetAtMs: now.getTime() + limits.meterWindowMs,
        }),
      ));
    } catch (err) {
      // Each answers the error, as one statement of its own would. None goes the ordinary way:
      // had the statement committed before its answer was lost, that would take the rotation
      // for a reuse and revoke the family.
      for (const item of batch) item.reject(err);
      return;
    }
    batch.forEach((item, i) => {
      const row = rows[i];
      if (Number(row?.ord) !== i + 1)
        return item.reject(new Error('refresh batch: a row per refresh, in order, expected'));
      answer(item, row, next[i]).then(item.resolve, item.reject);
    });
  }

  return {
    /**
     * A refresh in the next batch: the tokens, a throw (the 429, the reuse), or null when no
     * token could be rotated and nothing changed, for the ordinary path to tell why. A client
     * that failed to authenticate (null) finds no token; its address's budget is still read.
     */
    rotate(
      client: Client | null,
      params: Record<string, string | undefined>,
      target: ResourceKind | null,
      charge: StatementCharge,
    ): Promise<TokenResponse | null> {
      const { refresh_token: refreshToken, scope } = params;
      if (!refreshToken) return Promise.resolve(null);
      const requested = scope === undefined ? null : parseScope(scope);
      if (requested === null && scope !== undefined) return Promise.resolve(null);
      return new Promise((resolve, reject) => {
        queue.push({ client, tokenHash: sha256Hex(refreshToken), requested, target, charge, resolve, reject });
        if (queue.length === 1) setImmediate(() => void flush());
      });
    },
  };
}
