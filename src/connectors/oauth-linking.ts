import { userPrincipal } from '../http/auth.js';
import { createHash } from 'node:crypto';
import type { WorkspaceContext } from '../accounts/access.js';
import { inTransaction } from '../db/tx.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { open, seal } from '../lib/sealed.js';
import type { ConnectorsContext } from './context.js';
import { replaceCredentials } from './instance-credentials.js';
import { callbackUrl, createTokenClient, OauthFailure, ready, type TokenAnswer } from './oauth-client.js';
import { originOf } from './credentials.js';
import { createMcpAuth, type McpClientChoice, type McpOauthLink } from './mcp-auth.js';
import { verifierContext } from './sealing.js';
import { instanceStore, oauthStateStore } from './store/index.js';
import type { Actor } from './types.js';
import { isPerUser, replaceUserCredentials } from './user-links.js';

/** docs/connectors.md: state is single-use with a short TTL; ours lives 10 minutes. */
const OAUTH_STATE_TTL_MS = 10 * 60_000;

/** Linking an instance through the provider (RFC 6749 §4.1): initiate, the public callback, state pruning. */
export function createOauthLinking(ctx: ConnectorsContext) {
  const { db, clock, secrets, config } = ctx.kernel;
  const tokenClient = createTokenClient(ctx.kernel);
  const mcpAuth = createMcpAuth(ctx);

  function settingsUrl(query: Record<string, string>): string {
    // Always our own configured web URL: the redirect target never comes from the request.
    return `${config.webUrl}/settings/connectors?${new URLSearchParams(query).toString()}`;
  }

  return {
    clientMetadata: () => mcpAuth.clientMetadata(),

    /** Drops linking states that expired more than a day ago (used ones are kept that long too, for replay answers). */
    async pruneStates(now: Date): Promise<number> {
      const cutoff = new Date(now.getTime() - 24 * 3_600_000).toISOString();
      return oauthStateStore.pruneBefore(db, cutoff);
    },

    /** Returns the provider's authorization URL and a state (single-use, 10 min, bound to user and instance). */
    async initiate(actor: Actor, instanceId: string, choice: McpClientChoice = {}) {
      ctx.assertWriter(actor.ws);
      const instance = await ctx.requireInstance(actor.ws, instanceId);
      const def = await ctx.definitions.require(instance.connector_key, actor.ws.workspaceId);
      const state = randomToken(32);
      const stateHash = sha256Hex(state);
      const saveState = async (sealedValue: string | null) => {
        const now = clock.now();
        await oauthStateStore.insert(db, {
          state_hash: stateHash,
          instance_id: instanceId,
          user_id: actor.principal.userId,
          connector_key: def.key,
          verifier_sealed: sealedValue ? seal(secrets, sealedValue, verifierContext(stateHash)) : null,
          expires_at: new Date(now.getTime() + OAUTH_STATE_TTL_MS).toISOString(),
          used_at: null,
          created_at: now.toISOString(),
          browser_hash: null,
          held_code_sealed: null,
        });
      };
      if (def.adapter === 'mcp') {
        // An MCP server's own authorization server (docs/connectors.md, Authorization of remote
        // MCP servers): the verifier and the registration wait sealed in the state.
        const started = await mcpAuth.start(
          instance,
          actor.principal.userId,
          choice,
          callbackUrl(config.publicUrl, def.key),
          state,
        );
        // The mode too: a link started for one mode is never stored for the other.
        await saveState(
          JSON.stringify({ verifier: started.verifier, link: started.link, mode: instance.credential_mode }),
        );
        return { redirectUrl: started.redirectUrl, state };
      }
      const o = ready(def);
      const verifier = o.pkce ? randomToken(48) : null;
      await saveState(verifier);
      const url = new URL(o.authorizeUrl);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', o.clientId);
      url.searchParams.set('redirect_uri', callbackUrl(config.publicUrl, def.key));
      if (o.scopes.length > 0) url.searchParams.set('scope', o.scopes.join(' '));
      url.searchParams.set('state', state);
      if (verifier) {
        url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
        url.searchParams.set('code_challenge_method', 'S256');
      }
      return { redirectUrl: url.href, state };
    },

    /**
     * The public callback: consumes the state (conditional update: single use), checks its
     * expiry, connector and that its user still reaches the instance, exchanges the code
     * (no transaction open), stores the tokens sealed and moves pending_auth -> active.
     * Always answers with a redirect URL on our own web URL.
     */
    async callback(
      connectorKey: string,
      query: { code?: string; state?: string; error?: string; iss?: string },
    ): Promise<string> {
      const fail = (reason: string, instanceId?: string) =>
        settingsUrl({ connector: connectorKey, ...(instanceId ? { instanceId } : {}), status: 'error', reason });
      if (!query.state) return fail('missing_state');
      const stateHash = sha256Hex(query.state);
      const now = clock.now();
      const record = await oauthStateStore.find(db, stateHash);
      if (!record || record.connector_key !== connectorKey) return fail('invalid_state');
      if (record.used_at) return fail('state_already_used', record.instance_id);
      if (record.expires_at <= now.toISOString()) return fail('state_expired', record.instance_id);
      if (!(await oauthStateStore.consume(db, stateHash, now.toISOString())))
        return fail('state_already_used', record.instance_id);
      if (query.error) return fail('provider_denied', record.instance_id);
      if (!query.code) return fail('missing_code', record.instance_id);
      const instance = await instanceStore.findById(db, record.instance_id);
      if (!instance) return fail('instance_gone');
      // The state is bound to its user: they must still be able to act in the instance's workspace.
      let ws: WorkspaceContext;
      try {
        ws = await ctx.access.workspace(userPrincipal(record.user_id), { workspaceId: instance.workspace_id });
        ctx.assertWriter(ws);
      } catch {
        return fail('access_revoked', instance.id);
      }
      const def = await ctx.definitions.get(connectorKey, instance.workspace_id);
      if (!def) return fail('unknown_connector', instance.id);
      let tokens: TokenAnswer;
      let mcpLink: McpOauthLink | null = null;
      const own = isPerUser(instance);
      try {
        const verifier = record.verifier_sealed
          ? open(secrets, record.verifier_sealed, verifierContext(stateHash))
          : null;
        if (def.adapter === 'mcp') {
          const kept = JSON.parse(verifier ?? '{}') as { verifier: string; link: McpOauthLink; mode?: string };
          mcpLink = kept.link;
          // Switched since the initiate: a member's token must not become everyone's, nor the reverse.
          if ((kept.mode ?? 'shared') !== instance.credential_mode) return fail('mode_changed', instance.id);
          // A url moved to another origin since the initiate: these tokens are not for it.
          if (originOf(kept.link.resource) !== originOf((JSON.parse(instance.config) as { url?: unknown }).url))
            return fail('target_changed', instance.id);
          const answer = await mcpAuth.exchange(
            kept.link,
            query.code,
            kept.verifier,
            callbackUrl(config.publicUrl, connectorKey),
            query.iss,
          );
          tokens = answer;
        } else
          tokens = await tokenClient.request(def, {
            grant_type: 'authorization_code',
            code: query.code,
            redirect_uri: callbackUrl(config.publicUrl, connectorKey),
            ...(verifier ? { code_verifier: verifier } : {}),
          });
      } catch (err) {
        ctx.kernel.logger.warn('connector oauth exchange failed', {
          instanceId: instance.id,
          error: (err as Error).name,
        });
        return fail(err instanceof OauthFailure ? err.reason : 'token_exchange_failed', instance.id);
      }
      const stored = clock.now();
      const values: Record<string, string> = {
        access_token: tokens.access_token,
        ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
        // Where and as whom the refresh job refreshes them (sealed with them).
        ...(mcpLink ? { mcp_oauth: JSON.stringify(mcpLink) } : {}),
      };
      // No scope in the answer: the one asked for was granted (RFC 6749 §5.1).
      const asked = mcpLink ? (mcpLink.scope?.split(' ').filter(Boolean) ?? []) : (def.oauth?.scopes ?? []);
      const scopes = tokens.scope ? tokens.scope.split(' ').filter(Boolean) : asked;
      await inTransaction(db, async (trx) => {
        // Linked tokens go only to the definition's token and check URLs, which the operator
        // sets and no member can change: no origin to bind (docs/connectors.md, Credentials).
        // An MCP server's tokens are bound to its url's origin, as any of its credentials.
        const expiresAt = tokens.expires_in
          ? new Date(stored.getTime() + tokens.expires_in * 1000).toISOString()
          : null;
        const replacement = {
          instanceId: instance.id,
          credType: 'oauth2' as const,
          values,
          origin: mcpLink ? originOf((JSON.parse(instance.config) as { url?: unknown }).url) : null,
          scopes,
          expiresAt,
          at: stored.toISOString(),
        };
        // per_user: the tokens are the linking member's own (docs/connectors.md, Credential modes).
        if (own) await replaceUserCredentials(trx, secrets, record.user_id, replacement);
        else await replaceCredentials(trx, secrets, replacement);
        // docs/interface.md, States: pending_auth -> active on a successful callback, and re-initiating the flow is
        // how an instance in error recovers. An instance the team disabled stays inactive.
        await instanceStore.activateLinked(trx, instance.id, stored.toISOString());
        await ctx.audit(
          trx,
          {
            principal: userPrincipal(record.user_id),
            ws,
          },
          'connector.oauth_linked',
          instance.id,
          { connectorKey, scopes, ...(own ? { credentialMode: 'per_user' } : {}) },
        );
      });
      return settingsUrl({ connector: connectorKey, instanceId: instance.id, status: 'success' });
    },
  };
}
