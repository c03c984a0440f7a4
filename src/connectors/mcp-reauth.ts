import { inTransaction, type Executor } from '../db/tx.js';
import { DomainError, conflict } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import type { ConnectorsContext } from './context.js';
import { sealCredentials } from './credentials.js';
import { createMcpAuth, markNeedsAuth, NEEDS_AUTH_MESSAGE, type McpOauthLink } from './mcp-auth.js';
import { credentialStore, instanceStore, userCredentialStore } from './store/index.js';
import type { InstanceRow } from './tables.js';
import { isPerUser, openUserCredentials, REFUSED_401, relinkNeeded, sealUserCredentials } from './user-links.js';

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

/**
 * The OAuth link a call went out with: the instance's shared credential, or the caller's own
 * on a per_user instance. The operations touch that one row only.
 */
interface HeldLink {
  values: Record<string, string>;
  /** Granted scopes (JSON array). */
  scopes: string | null;
  /** A member's link already waiting for a re-link: the next attempt answers that. */
  relinkPending: boolean;
  claim(claim: string, nowIso: string, until: string): Promise<boolean>;
  release(claim: string): Promise<unknown>;
  save(
    claim: string,
    patch: { sealed_value: string; expires_at: string | null; scopes: string | null; rotated_at: string },
  ): Promise<unknown>;
  seal(values: Record<string, string>): string;
  /** Stores `sealed` unless the link changed since it was read; whether it did. */
  reseal(ex: Executor, sealed: string): Promise<boolean>;
}

const REAUTH = 'POST /connectors/instances/{id}/oauth/initiate';
const TOKEN_REFUSED_MESSAGE = `The MCP server refused the token and it could not be refreshed: re-authorization is needed (${REAUTH})`;

const union = (...lists: string[][]) => [...new Set(lists.flat())];

/**
 * What Gantry does when a remote MCP server refuses a call (docs/connectors.md,
 * Re-authorization): a 401 gets one refresh, then a new link is needed; a 403
 * `insufficient_scope` records the scopes the next link must ask for, since a server-side
 * gateway cannot send anyone to a consent page mid-call. On a shared instance the instance
 * waits for the link; on a per_user one only the caller's own link does (docs/connectors.md,
 * Credential modes), and the other members' calls go on.
 */
export function createMcpReauth(ctx: ConnectorsContext) {
  const { db, clock, secrets, config } = ctx.kernel;
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

  /** The OAuth link `userId`'s call used; null when there is none (or it is no OAuth link). */
  async function heldLink(instance: InstanceRow, userId: string): Promise<HeldLink | null> {
    if (isPerUser(instance)) {
      const row = await userCredentialStore.find(db, instance.id, userId);
      if (!row || row.cred_type !== 'oauth2') return null;
      return {
        values: openUserCredentials(secrets, row),
        scopes: row.scopes,
        relinkPending: row.relink_reason !== null,
        claim: (claim, nowIso, until) => userCredentialStore.claimOne(db, row.id, claim, nowIso, until),
        // A failed refresh of a member's link marks it for a re-link, which lets go of the claim.
        release: async () => undefined,
        save: (claim, patch) => userCredentialStore.saveRefreshed(db, row.id, claim, patch),
        seal: (values) => sealUserCredentials(secrets, instance.id, userId, 'oauth2', values, row.origin),
        reseal: (ex, sealed) => userCredentialStore.reseal(ex, row.id, row.sealed_value, sealed),
      };
    }
    const cred = await ctx.credentialValues(instance.id);
    if (!cred || cred.row.cred_type !== 'oauth2') return null;
    const { row } = cred;
    return {
      values: cred.values,
      scopes: row.scopes,
      relinkPending: false,
      claim: (claim, nowIso, until) => credentialStore.claimOne(db, row.id, claim, nowIso, until),
      release: (claim) => credentialStore.releaseClaim(db, row.id, claim),
      save: (claim, patch) => credentialStore.saveRefreshed(db, row.id, claim, patch),
      seal: (values) => sealCredentials(secrets, instance.id, 'oauth2', values, row.origin),
      reseal: (ex, sealed) => credentialStore.reseal(ex, row.id, row.sealed_value, sealed),
    };
  }

  /** One refresh of `link` now; false when the server refused it (or nothing could be refreshed). */
  async function refreshNow(instance: InstanceRow, link: HeldLink): Promise<boolean> {
    if (!link.values.mcp_oauth || !link.values.refresh_token) return false;
    const claim = newId();
    const now = clock.now();
    if (!(await link.claim(claim, now.toISOString(), new Date(now.getTime() + CLAIM_MS).toISOString())))
      throw conflict('The MCP server refused the token while it is being refreshed: call again');
    try {
      const tokens = await mcpAuth.refresh(
        JSON.parse(link.values.mcp_oauth) as McpOauthLink,
        link.values.refresh_token,
      );
      const after = clock.now();
      const fresh = {
        ...link.values,
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token ?? link.values.refresh_token,
      };
      await link.save(claim, {
        sealed_value: link.seal(fresh),
        expires_at: tokens.expires_in ? new Date(after.getTime() + tokens.expires_in * 1000).toISOString() : null,
        scopes: tokens.scope ? JSON.stringify(tokens.scope.split(' ').filter(Boolean)) : link.scopes,
        rotated_at: after.toISOString(),
      });
      return true;
    } catch (err) {
      await link.release(claim);
      ctx.kernel.logger.warn('connector token refresh on a refused call failed', {
        instanceId: instance.id,
        error: (err as Error).name,
      });
      return false;
    }
  }

  return {
    /**
     * A 401 on `userId`'s call made with `usedAuthorization`: true when the call may be retried
     * with a token refreshed here (or by someone else meanwhile); `mayRefresh` false for the
     * retry itself. Otherwise a new link is needed: a shared instance moves to pending_auth and
     * the caller gets a 409; on a per_user instance the caller's link is marked for a re-link
     * and they get LinkRequired.
     */
    async tokenRefused(
      instance: InstanceRow,
      userId: string,
      usedAuthorization: string | undefined,
      mayRefresh: boolean,
    ): Promise<true> {
      const own = isPerUser(instance);
      const link = usedAuthorization !== undefined && mayRefresh ? await heldLink(instance, userId) : null;
      if (link) {
        // Refreshed, linked again or marked since this call read the token: the next attempt decides.
        if (link.relinkPending || usedAuthorization !== `Bearer ${link.values.access_token}`) return true;
        if (await refreshNow(instance, link)) return true;
      }
      if (own) throw await relinkNeeded(db, config.webUrl, instance, userId, REFUSED_401);
      if (usedAuthorization === undefined) {
        // No token was sent: the server needs a first link.
        await markNeedsAuth(ctx, instance);
        throw conflict(NEEDS_AUTH_MESSAGE);
      }
      await move(instance, 'pending_auth', TOKEN_REFUSED_MESSAGE);
      throw conflict(TOKEN_REFUSED_MESSAGE);
    },

    /**
     * A 403 insufficient_scope on `userId`'s call asking for `required`: the union with what the
     * link was granted is recorded for the next initiate, and that link waits for it (the
     * instance goes to pending_auth when shared; the caller's own link is marked for a re-link
     * when per_user). When the grant already holds every scope asked for, or MAX_STEP_UPS
     * re-authorizations were made already, another consent would not help: nothing is asked,
     * the caller gets a 502, and a shared instance goes to error. Always throws the answer.
     */
    async scopeRefused(instance: InstanceRow, userId: string, required: string[]): Promise<never> {
      const own = isPerUser(instance);
      const held = await heldLink(instance, userId);
      const granted = held?.scopes ? (JSON.parse(held.scopes) as string[]) : [];
      const missing = required.filter((s) => !granted.includes(s));
      const link = held?.values.mcp_oauth ? (JSON.parse(held.values.mcp_oauth) as McpOauthLink) : null;
      const round = link?.stepUpRound ?? 0;
      if (!held || !link || missing.length === 0 || round >= MAX_STEP_UPS) {
        const why =
          missing.length === 0
            ? `though the authorization grants ${required.join(' ') || 'them'}`
            : `after ${round} step-up re-authorization(s)`;
        const message = `The MCP server refuses the call for insufficient scope ${why}: Gantry does not re-authorize again for it`;
        // A member's refusal is theirs: the instance stays as it is for the others.
        if (!own) await move(instance, 'error', message);
        throw new DomainError('UPSTREAM_FAILED', message);
      }
      const need: StepUpNeed = { scopes: union(granted, required), round };
      const sealed = held.seal({ ...held.values, mcp_step_up: JSON.stringify(need) });
      const why = `the MCP server requires the scope(s) ${missing.join(' ')} for this call; the next link asks for ${need.scopes.join(' ')}`;
      if (own) {
        const refusal = await inTransaction(db, async (trx) =>
          (await held.reseal(trx, sealed)) ? relinkNeeded(trx, config.webUrl, instance, userId, why) : null,
        );
        throw refusal ?? conflict('Your link to this connector instance changed during the call: call again');
      }
      await held.reseal(db, sealed);
      const message = `The MCP server requires the scope(s) ${missing.join(' ')} for this call: re-authorization is needed (${REAUTH}; it asks for ${need.scopes.join(' ')})`;
      await move(instance, 'pending_auth', message);
      throw conflict(message);
    },
  };
}
