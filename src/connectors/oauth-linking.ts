import { createHash } from 'node:crypto';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto.js';
import { open, seal } from '../lib/sealed.js';
import type { ConnectorsContext } from './context.js';
import { credentialTargetOf, originOf } from './credentials.js';
import { createMcpAuth, type McpClientChoice } from './mcp-auth.js';
import { callbackUrl, ready } from './oauth-client.js';
import { createLinkCompletion, settingsUrlOf } from './oauth-link-completion.js';
import { heldCodeContext, verifierContext } from './sealing.js';
import { instanceStore, oauthStateStore } from './store/index.js';
import type { Actor } from './types.js';
import { isPerUser } from './user-links.js';

/** docs/connectors.md: state is single-use with a short TTL; ours lives 10 minutes. */
const OAUTH_STATE_TTL_MS = 10 * 60_000;
/** A link whose callback another browser finished, as its confirmation page shows it. */
export interface HeldLink {
  userId: string;
  instanceName: string;
  connectorKey: string;
  perUser: boolean;
  server: string | null;
  expiresAt: string;
}

/** A held link's address is its state's SHA-256 (hex). */
const HOLD_ID = /^[0-9a-f]{64}$/;

/** Linking an instance through the provider (RFC 6749 §4.1): initiate, the public callback, state pruning. */
export function createOauthLinking(ctx: ConnectorsContext) {
  const { db, clock, secrets, config } = ctx.kernel;
  const mcpAuth = createMcpAuth(ctx);

  const settingsUrl = (query: Record<string, string>) => settingsUrlOf(config.webUrl, query);
  const complete = createLinkCompletion(ctx);

  /** Whether the browser presenting `browserToken` is the one the state is bound to. */
  const sameBrowser = (record: { browser_hash: string | null }, browserToken: string | null) =>
    browserToken !== null && record.browser_hash !== null && safeEqual(sha256Hex(browserToken), record.browser_hash);

  return {
    clientMetadata: () => mcpAuth.clientMetadata(),

    /** Drops linking states that expired more than a day ago (used ones are kept that long too, for replay answers). */
    async pruneStates(now: Date): Promise<number> {
      const cutoff = new Date(now.getTime() - 24 * 3_600_000).toISOString();
      return oauthStateStore.pruneBefore(db, cutoff);
    },

    /**
     * Returns the provider's authorization URL and a state (single-use, 10 min, bound to user,
     * instance and the browser that asked: `browserToken`, its link cookie).
     */
    async initiate(actor: Actor, instanceId: string, choice: McpClientChoice, browserToken: string) {
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
          browser_hash: sha256Hex(browserToken),
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
          JSON.stringify({
            verifier: started.verifier,
            link: started.link,
            mode: instance.credential_mode,
            target: credentialTargetOf((JSON.parse(instance.config) as { url?: unknown }).url),
          }),
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
     * expiry and connector. The browser that started the link (its cookie, `browserToken`)
     * finishes it at once (oauth-link-completion.ts). Any other browser only holds the code:
     * the page /connectors/link/{hold} then asks the member who started the link, signed in
     * there, to confirm (docs/connectors.md, OAuth linking; docs/security.md, N-H3).
     */
    async callback(
      connectorKey: string,
      query: { code?: string; state?: string; error?: string; iss?: string },
      browserToken: string | null,
    ): Promise<{ location: string } | { hold: string; bindToken: string }> {
      const fail = (reason: string, instanceId?: string) => ({
        location: settingsUrl({
          connector: connectorKey,
          ...(instanceId ? { instanceId } : {}),
          status: 'error',
          reason,
        }),
      });
      if (!query.state) return fail('missing_state');
      const stateHash = sha256Hex(query.state);
      const now = clock.now().toISOString();
      const record = await oauthStateStore.find(db, stateHash);
      if (!record || record.connector_key !== connectorKey) return fail('invalid_state');
      if (record.used_at) return fail('state_already_used', record.instance_id);
      if (record.expires_at <= now) return fail('state_expired', record.instance_id);
      if (query.error || !query.code) {
        if (!(await oauthStateStore.consume(db, stateHash, now))) return fail('state_already_used', record.instance_id);
        return fail(query.error ? 'provider_denied' : 'missing_code', record.instance_id);
      }
      if (sameBrowser(record, browserToken)) {
        if (!(await oauthStateStore.consume(db, stateHash, now))) return fail('state_already_used', record.instance_id);
        return { location: await complete(record, query.code, query.iss) };
      }
      const bindToken = randomToken(32);
      const held = seal(secrets, JSON.stringify({ code: query.code, iss: query.iss }), heldCodeContext(stateHash));
      if (!(await oauthStateStore.hold(db, stateHash, held, sha256Hex(bindToken), now)))
        return fail('state_already_used', record.instance_id);
      return { hold: stateHash, bindToken };
    },

    /** What the confirmation page shows of a held link, to the browser that holds it; else why not. */
    async held(hold: string, browserToken: string | null): Promise<HeldLink | { refused: 'gone' | 'other_browser' }> {
      const record = HOLD_ID.test(hold) ? await oauthStateStore.find(db, hold) : undefined;
      if (!record || record.held_code_sealed === null || record.expires_at <= clock.now().toISOString())
        return { refused: 'gone' };
      if (!sameBrowser(record, browserToken)) return { refused: 'other_browser' };
      const instance = await instanceStore.findById(db, record.instance_id);
      if (!instance) return { refused: 'gone' };
      const url = (JSON.parse(instance.config) as { url?: unknown }).url;
      return {
        userId: record.user_id,
        instanceName: instance.display_name,
        connectorKey: record.connector_key,
        perUser: isPerUser(instance),
        server: typeof url === 'string' ? originOf(url) : null,
        expiresAt: record.expires_at,
      };
    },

    /**
     * Finishes (`confirm`) or drops a held link, from the browser that holds it, for the member
     * who started it: the code never becomes another member's link. Answers the outcome's
     * settings URL, or why it was refused.
     */
    async finishHeld(
      hold: string,
      browserToken: string | null,
      userId: string,
      decision: 'confirm' | 'cancel',
    ): Promise<{ location: string } | { refused: 'gone' | 'other_browser' | 'other_user' }> {
      const record = HOLD_ID.test(hold) ? await oauthStateStore.find(db, hold) : undefined;
      if (!record || record.held_code_sealed === null || record.expires_at <= clock.now().toISOString())
        return { refused: 'gone' };
      if (!sameBrowser(record, browserToken)) return { refused: 'other_browser' };
      if (userId !== record.user_id) {
        // Someone else's link: the code (this browser's upstream account) is never used.
        await oauthStateStore.releaseHeld(db, hold);
        ctx.kernel.logger.warn('connector link refused: finished by another member', {
          instanceId: record.instance_id,
        });
        return { refused: 'other_user' };
      }
      const sealed = record.held_code_sealed;
      if (!(await oauthStateStore.releaseHeld(db, hold))) return { refused: 'gone' };
      const base = { connector: record.connector_key, instanceId: record.instance_id };
      if (decision === 'cancel') return { location: settingsUrl({ ...base, status: 'error', reason: 'cancelled' }) };
      const { code, iss } = JSON.parse(open(secrets, sealed, heldCodeContext(hold))) as { code: string; iss?: string };
      return { location: await complete(record, code, iss) };
    },
  };
}
