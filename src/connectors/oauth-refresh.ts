import { inTransaction } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import type { ConnectorsContext } from './context.js';
import { openCredentials, sealCredentials } from './credentials.js';
import { createMcpAuth, type McpOauthLink } from './mcp-auth.js';
import { createTokenClient, OauthFailure } from './oauth-client.js';
import { credentialStore, instanceStore, userCredentialStore } from './store/index.js';
import { linkUrlOf, openUserCredentials, sealUserCredentials } from './user-links.js';

/** A claimed credential is someone's to refresh for this long (a crashed process lets go). */
const CLAIM_MS = 2 * 60_000;
const REFRESH_CONCURRENCY = 8;
const REFRESH_BATCH = 500;

/** A claimed OAuth credential, shared or a member's own, as the refresh needs it. */
interface Claimed {
  id: string;
  instanceId: string;
  workspaceId: string;
  connectorKey: string;
  scopes: string | null;
  values(): Record<string, string>;
  seal(values: Record<string, string>): string;
  /** Stores refreshed tokens if the claim still holds. */
  save(patch: {
    sealed_value: string;
    expires_at: string | null;
    scopes: string | null;
    rotated_at: string;
  }): Promise<unknown>;
  /** The refresh failed: who is told, and what no longer works. */
  failed(message: string): Promise<void>;
}

/** Where claimed credentials come from and go back to: the shared ones, then members' own links. */
interface Source {
  claimDue(claim: string, nowIso: string, dueBefore: string, claimedUntil: string, batch: number): Promise<number>;
  claimed(claim: string): Promise<Claimed[]>;
}

/** The background refresh of linked OAuth tokens (RFC 6749 §6), the body of the refresh job (jobs.ts). */
export function createTokenRefresh(ctx: ConnectorsContext) {
  const { db, clock, secrets, config } = ctx.kernel;
  const tokenClient = createTokenClient(ctx.kernel);
  const mcpAuth = createMcpAuth(ctx);
  const settingsUrl = (instance: { id: string; connector_key: string }) =>
    `${config.webUrl}/settings/connectors?connector=${encodeURIComponent(instance.connector_key)}&instanceId=${instance.id}`;

  /**
   * Shared credentials: a failure moves active -> error with healthMessage and notifies the
   * instance's creator (docs/interface.md, States).
   */
  const shared: Source = {
    claimDue: (...args) => credentialStore.claimDue(db, ...args),
    async claimed(claim) {
      return (await credentialStore.claimed(db, claim)).map((row) => ({
        id: row.id,
        instanceId: row.instance_id,
        workspaceId: row.workspace_id,
        connectorKey: row.connector_key,
        scopes: row.scopes,
        values: () => openCredentials(secrets, row.instance_id, 'oauth2', row.sealed_value, row.origin),
        seal: (values) => sealCredentials(secrets, row.instance_id, 'oauth2', values, row.origin),
        save: (patch) => credentialStore.saveRefreshed(db, row.id, claim, patch),
        failed: (message) =>
          inTransaction(db, async (trx) => {
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
                actionUrl: settingsUrl({ id: row.instance_id, connector_key: row.connector_key }),
              });
            }
          }),
      }));
    },
  };

  /**
   * Members' own links (per_user instances): a failure concerns that member only (docs/connectors.md,
   * Credential modes): their link waits for a re-link and they are told; the instance's status stays.
   */
  const ownLinks: Source = {
    claimDue: (...args) => userCredentialStore.claimDue(db, ...args),
    async claimed(claim) {
      return (await userCredentialStore.claimed(db, claim)).map((row) => ({
        id: row.id,
        instanceId: row.instance_id,
        workspaceId: row.workspace_id,
        connectorKey: row.connector_key,
        scopes: row.scopes,
        values: () => openUserCredentials(secrets, { ...row, cred_type: 'oauth2' }),
        seal: (values) => sealUserCredentials(secrets, row.instance_id, row.user_id, 'oauth2', values, row.origin),
        save: (patch) => userCredentialStore.saveRefreshed(db, row.id, claim, patch),
        failed: (message) =>
          inTransaction(db, async (trx) => {
            await userCredentialStore.markRelink(trx, row.id, message);
            await ctx.notifications.notify(trx, {
              userId: row.user_id,
              title: `Your link to ${row.display_name} needs attention`,
              body: `Gantry could not refresh your ${row.connector_key} token for ${row.display_name}. Link your account again to use its tools.`,
              category: 'system',
              priority: 'high',
              actionUrl: linkUrlOf(config.webUrl, { id: row.instance_id, connector_key: row.connector_key }),
            });
          }),
      }));
    },
  };

  async function refreshOne(row: Claimed): Promise<void> {
    const def = await ctx.definitions.get(row.connectorKey, row.workspaceId);
    if (!def) throw new OauthFailure('unknown_connector', 'the connector definition no longer exists');
    const values = row.values();
    if (!values.refresh_token)
      throw new OauthFailure('no_refresh_token', 'no refresh token is stored; link the connector again');
    // An MCP server's tokens refresh at its own authorization server, with `resource`.
    const tokens = values.mcp_oauth
      ? await mcpAuth.refresh(JSON.parse(values.mcp_oauth) as McpOauthLink, values.refresh_token)
      : await tokenClient.request(def, { grant_type: 'refresh_token', refresh_token: values.refresh_token });
    const after = clock.now();
    const fresh = {
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token ?? values.refresh_token,
      ...(values.mcp_oauth ? { mcp_oauth: values.mcp_oauth } : {}),
    };
    // refresh_claimed_until stays: a token shorter-lived than the horizon is not refreshed
    // again within this run.
    await row.save({
      sealed_value: row.seal(fresh),
      expires_at: tokens.expires_in ? new Date(after.getTime() + tokens.expires_in * 1000).toISOString() : null,
      scopes: tokens.scope ? JSON.stringify(tokens.scope.split(' ').filter(Boolean)) : row.scopes,
      rotated_at: after.toISOString(),
    });
  }

  return {
    /**
     * The refresh job body: OAuth credentials (shared, then members' own) expiring before
     * `now + horizonMs` are claimed with one conditional UPDATE (a credential another process
     * holds is skipped), then refreshed outside any transaction. A rotated refresh token
     * replaces the old one. A failure is handled by the credential's source (see above).
     */
    async refreshDue(now: Date, horizonMs: number): Promise<{ claimed: number; refreshed: number; failed: number }> {
      const claim = newId();
      const nowIso = now.toISOString();
      const dueBefore = new Date(now.getTime() + horizonMs).toISOString();
      let claimed = 0;
      let refreshed = 0;
      let failed = 0;
      for (const source of [shared, ownLinks]) {
        for (;;) {
          const claimedUntil = new Date(now.getTime() + CLAIM_MS).toISOString();
          // Instances in error (and links waiting for a re-link) are left out: their token already failed once.
          const taken = await source.claimDue(claim, nowIso, dueBefore, claimedUntil, REFRESH_BATCH);
          if (taken === 0) break;
          const rows = await source.claimed(claim);
          claimed += rows.length;
          let next = 0;
          const worker = async () => {
            while (next < rows.length) {
              const row = rows[next++];
              try {
                await refreshOne(row);
                refreshed++;
              } catch (err) {
                failed++;
                await row.failed(`OAuth token refresh failed: ${(err as Error).message}`.slice(0, 500));
                ctx.kernel.logger.warn('connector token refresh failed', {
                  instanceId: row.instanceId,
                  reason: err instanceof OauthFailure ? err.reason : 'error',
                });
              }
            }
          };
          await Promise.all(Array.from({ length: REFRESH_CONCURRENCY }, worker));
        }
      }
      return { claimed, refreshed, failed };
    },
  };
}
