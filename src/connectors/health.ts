import { inTransaction } from '../db/tx.js';
import { DomainError } from '../http/errors.js';
import { guardedFetch, readLimited } from '../lib/outbound.js';
import type { ConnectorsContext } from './context.js';
import { authHeaders } from './credentials.js';
import { closeMcp, McpAuthRequired, openMcp, pingMcp } from './mcp.js';
import { NEEDS_AUTH_MESSAGE } from './mcp-auth.js';
import { credentialStore, instanceStore } from './store/index.js';
import type { Actor } from './types.js';
import { isPerUser, LinkRequired, REFUSED_401, relinkNeeded } from './user-links.js';

/** The health test of an instance (POST .../test). */
export function createHealthCheck(ctx: ConnectorsContext) {
  const { db, clock, config } = ctx.kernel;

  return {
    /**
     * Health test per definition: MCP initialize (or server/discover) + ping; OAuth: the check
     * URL with the token; others: whether the credentials they need are stored. Healthy ->
     * active, unhealthy -> error (a disabled instance stays inactive; see docs).
     */
    async test(actor: Actor, id: string) {
      ctx.assertWriter(actor.ws);
      const instance = await ctx.requireInstance(actor.ws, id);
      const def = await ctx.definitions.get(instance.connector_key, actor.ws.workspaceId);
      const started = performance.now();
      let healthy = false;
      let message: string | null = null;
      let needsAuth = false;
      // per_user: a missing or refused link is the caller's own state, not the instance's.
      let callersOnly = false;
      try {
        if (!def) throw new Error('connector definition no longer exists');
        if (def.adapter === 'mcp') {
          const session = await openMcp(await ctx.mcpTarget(instance, actor.principal.userId));
          try {
            await pingMcp(session);
            message = `MCP server reachable (protocol ${session.protocolVersion})`;
          } finally {
            await closeMcp(session);
          }
        } else if (def.authKind === 'oauth2') {
          const cred = await ctx.credentialValues(id);
          if (!cred) throw new Error('not linked: no OAuth token stored');
          if (cred.row.expires_at && cred.row.expires_at <= clock.now().toISOString())
            throw new Error('the OAuth token has expired');
          if (def.oauth?.checkUrl) {
            const res = await guardedFetch({ allowPrivate: config.allowPrivateNetworks })(def.oauth.checkUrl, {
              headers: { ...authHeaders('oauth2', cred.values), accept: 'application/json' },
            });
            await readLimited(res, 64 * 1024).catch(() => '');
            if (!res.ok) throw new Error(`check URL answered ${res.status}`);
            message = `check URL answered ${res.status}`;
          } else message = 'token present (no check URL configured)';
        } else if (def.authKind === 'credentials') {
          const cred = await credentialStore.find(db, id);
          if (!cred) throw new Error(`no ${def.credType} credentials stored`);
          message = 'credentials stored';
        } else message = 'nothing to check';
        healthy = true;
      } catch (err) {
        needsAuth = err instanceof McpAuthRequired;
        callersOnly = isPerUser(instance) && (needsAuth || err instanceof LinkRequired);
        if (callersOnly)
          message = (
            needsAuth
              ? await relinkNeeded(db, config.webUrl, instance, actor.principal.userId, REFUSED_401)
              : (err as LinkRequired)
          ).message;
        else if (needsAuth) message = NEEDS_AUTH_MESSAGE;
        else message = err instanceof DomainError ? err.message : `unhealthy: ${(err as Error).message}`.slice(0, 500);
      }
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      const now = clock.now().toISOString();
      if (callersOnly) return { healthy, message, latencyMs };
      await inTransaction(db, async (trx) => {
        const fresh = await instanceStore.findById(trx, id);
        if (!fresh) return;
        // A server asking for authorization waits for a link (pending_auth), not in error.
        const status = fresh.enabled ? (healthy ? 'active' : needsAuth ? 'pending_auth' : 'error') : 'inactive';
        await instanceStore.update(trx, id, {
          status,
          last_health_check: now,
          health_message: message,
          updated_at: now,
        });
        // Only active instances serve tools over MCP.
        if (status !== fresh.status) await ctx.toolsChanged(trx, fresh.workspace_id);
      });
      return { healthy, message, latencyMs };
    },
  };
}
