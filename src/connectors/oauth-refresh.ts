import { inTransaction } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { ConnectorsContext } from './context.js';
import { openCredentials, sealCredentials } from './credentials.js';
import { createMcpAuth, type McpOauthLink } from './mcp-auth.js';
import { createTokenClient, OauthFailure } from './oauth-client.js';
import { credentialStore, instanceStore } from './store/index.js';

/** A claimed credential is someone's to refresh for this long (a crashed process lets go). */
const CLAIM_MS = 2 * 60_000;
const REFRESH_CONCURRENCY = 8;
const REFRESH_BATCH = 500;

/** The background refresh of linked OAuth tokens (RFC 6749 §6), the body of the refresh job (jobs.ts). */
export function createTokenRefresh(ctx: ConnectorsContext) {
  const { db, clock, secrets, config } = ctx.kernel;
  const tokenClient = createTokenClient(ctx.kernel);
  const mcpAuth = createMcpAuth(ctx);

  return {
    /**
     * The refresh job body: OAuth credentials expiring before `now + horizonMs` are claimed
     * with one conditional UPDATE (a credential another process holds is skipped), then
     * refreshed outside any transaction. A rotated refresh token replaces the old one. A
     * failure moves active -> error with healthMessage and notifies the instance's creator.
     */
    async refreshDue(now: Date, horizonMs: number): Promise<{ claimed: number; refreshed: number; failed: number }> {
      const claim = newId();
      const nowIso = now.toISOString();
      const dueBefore = new Date(now.getTime() + horizonMs).toISOString();
      let claimed = 0;
      let refreshed = 0;
      let failed = 0;
      for (;;) {
        // Instances in error wait for a re-link or a test: their token already failed once.
        const taken = await credentialStore.claimDue(
          db,
          claim,
          nowIso,
          dueBefore,
          new Date(now.getTime() + CLAIM_MS).toISOString(),
          REFRESH_BATCH,
        );
        if (taken === 0) break;
        const rows = await credentialStore.claimed(db, claim);
        claimed += rows.length;
        let next = 0;
        const worker = async () => {
          while (next < rows.length) {
            const row = rows[next++];
            try {
              const def = await ctx.definitions.get(row.connector_key, row.workspace_id);
              if (!def) throw new OauthFailure('unknown_connector', 'the connector definition no longer exists');
              const values = openCredentials(secrets, row.instance_id, 'oauth2', row.sealed_value, row.origin);
              if (!values.refresh_token)
                throw new OauthFailure('no_refresh_token', 'no refresh token is stored; link the connector again');
              // An MCP server's tokens refresh at its own authorization server, with `resource`.
              const tokens = values.mcp_oauth
                ? await mcpAuth.refresh(JSON.parse(values.mcp_oauth) as McpOauthLink, values.refresh_token)
                : await tokenClient.request(def, {
                    grant_type: 'refresh_token',
                    refresh_token: values.refresh_token,
                  });
              const after = clock.now();
              const fresh = {
                access_token: tokens.access_token,
                refresh_token: tokens.refresh_token ?? values.refresh_token,
                ...(values.mcp_oauth ? { mcp_oauth: values.mcp_oauth } : {}),
              };
              // refresh_claimed_until stays: a token shorter-lived than the horizon is
              // not refreshed again within this run.
              await credentialStore.saveRefreshed(db, row.id, claim, {
                sealed_value: sealCredentials(secrets, row.instance_id, 'oauth2', fresh, row.origin),
                expires_at: tokens.expires_in
                  ? new Date(after.getTime() + tokens.expires_in * 1000).toISOString()
                  : null,
                scopes: tokens.scope ? JSON.stringify(tokens.scope.split(' ').filter(Boolean)) : row.scopes,
                rotated_at: after.toISOString(),
              });
              refreshed++;
            } catch (err) {
              failed++;
              const message = `OAuth token refresh failed: ${(err as Error).message}`.slice(0, 500);
              await inTransaction(db, async (trx) => {
                // Let go of this run's claim (a later batch selects by it) but keep the lease time.
                await credentialStore.releaseClaim(trx, row.id, claim);
                if (await instanceStore.failIfActive(trx, row.instance_id, message, clock.now().toISOString())) {
                  // Only active instances serve tools over MCP.
                  await ctx.toolsChanged(trx, row.workspace_id);
                  await ctx.notifications.notify(trx, {
                    userId: row.created_by,
                    title: `${row.display_name} needs attention`,
                    body: `Gantry could not refresh the ${row.connector_key} token of ${row.display_name}. Link it again to restore access.`,
                    category: 'system',
                    priority: 'high',
                    actionUrl: `${config.webUrl}/settings/connectors?connector=${encodeURIComponent(row.connector_key)}&instanceId=${row.instance_id}`,
                  });
                }
              });
              ctx.kernel.logger.warn('connector token refresh failed', {
                instanceId: row.instance_id,
                reason: err instanceof OauthFailure ? err.reason : 'error',
              });
            }
          }
        };
        await Promise.all(Array.from({ length: REFRESH_CONCURRENCY }, worker));
      }
      return { claimed, refreshed, failed };
    },
  };
}
