import { DomainError, conflict } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import type { ConnectorsContext } from './context.js';
import { sealCredentials } from './credentials.js';
import { createMcpAuth, markNeedsAuth, NEEDS_AUTH_MESSAGE, type McpOauthLink } from './mcp-auth.js';
import { credentialStore, instanceStore } from './store/index.js';
import type { InstanceRow } from './tables.js';

/** A refresh on a call's 401 holds the credential this long (as the refresh job's claim). */
const CLAIM_MS = 2 * 60_000;
/**
 * Step-up re-authorizations in a row for one link: a server still asking for more scopes
 * after these is not followed further (docs/connectors.md, Re-authorization).
 */
const MAX_STEP_UPS = 2;

/** What a step-up left for the next initiate, sealed beside the tokens (key `mcp_step_up`). */
interface StepUpNeed {
  scopes: string[];
  /** Step-up re-authorizations already made for the current link (the next one is round + 1). */
  round: number;
}

const REAUTH = 'POST /connectors/instances/{id}/oauth/initiate';
const TOKEN_REFUSED_MESSAGE = `The MCP server refused the token and it could not be refreshed: re-authorization is needed (${REAUTH})`;

const union = (...lists: string[][]) => [...new Set(lists.flat())];

/**
 * What Gantry does when a remote MCP server refuses a call (docs/connectors.md,
 * Re-authorization): a 401 gets one refresh, then the instance waits for a new link; a 403
 * `insufficient_scope` records the scopes the next link must ask for, since a server-side
 * gateway cannot send anyone to a consent page mid-call.
 */
export function createMcpReauth(ctx: ConnectorsContext) {
  const { db, clock, secrets } = ctx.kernel;
  const mcpAuth = createMcpAuth(ctx);

  /** Enabled instances move (a disabled one keeps inactive); the tools served may change. */
  async function move(instance: InstanceRow, status: 'pending_auth' | 'error', message: string) {
    const now = clock.now().toISOString();
    await instanceStore.update(db, instance.id, {
      ...(instance.enabled ? { status } : {}),
      health_message: message.slice(0, 500),
      last_health_check: now,
      updated_at: now,
    });
    if (instance.enabled && instance.status !== status) await ctx.toolsChanged(db, instance.workspace_id);
  }

  return {
    /**
     * A 401 on a call made with `usedAuthorization`: true when the call may be retried with
     * a token refreshed here (or by someone else meanwhile); `mayRefresh` false for the retry
     * itself. Otherwise the instance is moved to pending_auth and the caller gets a 409
     * saying re-authorization is needed.
     */
    async tokenRefused(
      instance: InstanceRow,
      usedAuthorization: string | undefined,
      mayRefresh: boolean,
    ): Promise<true> {
      if (usedAuthorization === undefined) {
        // No token was sent: the server needs a first link.
        await markNeedsAuth(ctx, instance);
        throw conflict(NEEDS_AUTH_MESSAGE);
      }
      const cred = mayRefresh ? await ctx.credentialValues(instance.id) : null;
      if (cred && cred.row.cred_type === 'oauth2') {
        // Someone refreshed (or linked) since this call read the token: the call may go again.
        if (usedAuthorization !== `Bearer ${cred.values.access_token}`) return true;
        if (cred.values.mcp_oauth && cred.values.refresh_token) {
          const claim = newId();
          const now = clock.now();
          const until = new Date(now.getTime() + CLAIM_MS).toISOString();
          if (!(await credentialStore.claimOne(db, cred.row.id, claim, now.toISOString(), until)))
            throw conflict('The MCP server refused the token while it is being refreshed: call again');
          try {
            const link = JSON.parse(cred.values.mcp_oauth) as McpOauthLink;
            const tokens = await mcpAuth.refresh(link, cred.values.refresh_token);
            const after = clock.now();
            const fresh = {
              ...cred.values,
              access_token: tokens.access_token,
              refresh_token: tokens.refresh_token ?? cred.values.refresh_token,
            };
            await credentialStore.saveRefreshed(db, cred.row.id, claim, {
              sealed_value: sealCredentials(secrets, instance.id, 'oauth2', fresh, cred.row.origin),
              expires_at: tokens.expires_in ? new Date(after.getTime() + tokens.expires_in * 1000).toISOString() : null,
              scopes: tokens.scope ? JSON.stringify(tokens.scope.split(' ').filter(Boolean)) : cred.row.scopes,
              rotated_at: after.toISOString(),
            });
            return true;
          } catch (err) {
            await credentialStore.releaseClaim(db, cred.row.id, claim);
            ctx.kernel.logger.warn('connector token refresh on a refused call failed', {
              instanceId: instance.id,
              error: (err as Error).name,
            });
          }
        }
      }
      await move(instance, 'pending_auth', TOKEN_REFUSED_MESSAGE);
      throw conflict(TOKEN_REFUSED_MESSAGE);
    },

    /**
     * A 403 insufficient_scope asking for `required`: the union with what the link was granted
     * is recorded for the next initiate and the instance waits for it (pending_auth). When the
     * grant already holds every scope asked for, or MAX_STEP_UPS re-authorizations were made
     * already, another consent would not help: the instance goes to error and nothing is asked.
     * Always throws the caller's answer.
     */
    async scopeRefused(instance: InstanceRow, required: string[]): Promise<never> {
      const cred = await ctx.credentialValues(instance.id);
      const granted = cred?.row.scopes ? (JSON.parse(cred.row.scopes) as string[]) : [];
      const missing = required.filter((s) => !granted.includes(s));
      const link = cred?.values.mcp_oauth ? (JSON.parse(cred.values.mcp_oauth) as McpOauthLink) : null;
      const round = link?.stepUpRound ?? 0;
      if (!cred || !link || missing.length === 0 || round >= MAX_STEP_UPS) {
        const why =
          missing.length === 0
            ? `though the authorization grants ${required.join(' ') || 'them'}`
            : `after ${round} step-up re-authorization(s)`;
        const message = `The MCP server refuses the call for insufficient scope ${why}: Gantry does not re-authorize again for it`;
        await move(instance, 'error', message);
        throw new DomainError('UPSTREAM_FAILED', message);
      }
      const need: StepUpNeed = { scopes: union(granted, required), round };
      const sealed = sealCredentials(
        secrets,
        instance.id,
        'oauth2',
        { ...cred.values, mcp_step_up: JSON.stringify(need) },
        cred.row.origin,
      );
      await credentialStore.reseal(db, cred.row.id, cred.row.sealed_value, sealed);
      const message = `The MCP server requires the scope(s) ${missing.join(' ')} for this call: re-authorization is needed (${REAUTH}; it asks for ${need.scopes.join(' ')})`;
      await move(instance, 'pending_auth', message);
      throw conflict(message);
    },
  };
}
