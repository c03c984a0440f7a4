import type { WorkspaceContext } from '../accounts/access.js';
import { inTransaction } from '../db/tx.js';
import { userPrincipal } from '../http/auth.js';
import { open } from '../lib/sealed.js';
import type { ConnectorsContext } from './context.js';
import { boundTo, credentialTargetOf, originOf } from './credentials.js';
import { replaceCredentials } from './instance-credentials.js';
import { createMcpAuth, type McpOauthLink } from './mcp-auth.js';
import { callbackUrl, createTokenClient, OauthFailure, type TokenAnswer } from './oauth-client.js';
import { verifierContext } from './sealing.js';
import { instanceStore } from './store/index.js';
import type { ConnectorOauthStatesTable } from './tables.js';
import { isPerUser, replaceUserCredentials } from './user-links.js';

/** Where a link's outcome is told: always our own configured web URL, never one from the request. */
export const settingsUrlOf = (webUrl: string, query: Record<string, string>) =>
  `${webUrl}/settings/connectors?${new URLSearchParams(query).toString()}`;

/**
 * The end of a link (docs/connectors.md, OAuth linking), once its state was consumed and the
 * browser that finished it is known to be the one that may: checks that the linking member
 * still reaches the instance, exchanges the code (no transaction open), stores the tokens
 * sealed (the member's own on a per_user instance) and moves pending_auth -> active. Answers
 * the settings URL that tells the outcome.
 */
export function createLinkCompletion(ctx: ConnectorsContext) {
  const { db, clock, secrets, config } = ctx.kernel;
  const tokenClient = createTokenClient(ctx.kernel);
  const mcpAuth = createMcpAuth(ctx);

  return async function complete(record: ConnectorOauthStatesTable, code: string, iss?: string): Promise<string> {
    const connectorKey = record.connector_key;
    const settingsUrl = (query: Record<string, string>) => settingsUrlOf(config.webUrl, query);
    const fail = (reason: string, instanceId?: string) =>
      settingsUrl({ connector: connectorKey, ...(instanceId ? { instanceId } : {}), status: 'error', reason });
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
    const { url } = JSON.parse(instance.config) as { url?: unknown };
    const def = await ctx.definitions.get(connectorKey, instance.workspace_id);
    if (!def) return fail('unknown_connector', instance.id);
    let tokens: TokenAnswer;
    let mcpLink: McpOauthLink | null = null;
    const own = isPerUser(instance);
    try {
      const verifier = record.verifier_sealed
        ? open(secrets, record.verifier_sealed, verifierContext(record.state_hash))
        : null;
      if (def.adapter === 'mcp') {
        const kept = JSON.parse(verifier ?? '{}') as {
          verifier: string;
          link: McpOauthLink;
          mode?: string;
          target?: string;
        };
        mcpLink = kept.link;
        // Switched since the initiate: a member's token must not become everyone's, nor the reverse.
        if ((kept.mode ?? 'shared') !== instance.credential_mode) return fail('mode_changed', instance.id);
        // A url moved to another server (origin or path) since the initiate: these tokens are not
        // for it. A state from before targets were kept compares the resource's origin.
        if (!boundTo(kept.target ?? originOf(kept.link.resource) ?? '', url))
          return fail('target_changed', instance.id);
        const answer = await mcpAuth.exchange(
          kept.link,
          code,
          kept.verifier,
          callbackUrl(config.publicUrl, connectorKey),
          iss,
        );
        tokens = answer;
      } else
        tokens = await tokenClient.request(def, {
          grant_type: 'authorization_code',
          code: code,
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
      // An MCP server's tokens are bound to its url's origin and path, as any of its credentials.
      const expiresAt = tokens.expires_in ? new Date(stored.getTime() + tokens.expires_in * 1000).toISOString() : null;
      const replacement = {
        instanceId: instance.id,
        credType: 'oauth2' as const,
        values,
        origin: mcpLink ? credentialTargetOf(url) : null,
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
  };
}
