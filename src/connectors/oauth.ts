import { createHash } from 'node:crypto';
import type { Kernel } from '../kernel.js';
import type { AccountAccess, WorkspaceContext } from '../accounts/access.js';
import type { AuditAction } from '../audit/record.js';
import type { NotificationsService } from '../notifications/service.js';
import { inTransaction, type Executor } from '../db/tx.js';
import { DomainError, conflict } from '../http/errors.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import { open, seal } from '../lib/sealed.js';
import type { Definition, Definitions } from './definitions.js';
import type { Actor } from './service.js';
import type { InstanceRow } from './tables.js';
import { openCredentials, sealCredentials } from './credentials.js';
import { verifierContext } from './sealing.js';
import { guardedFetch, readLimited } from '../lib/outbound.js';

/** Spec: state is single-use with a short TTL; ours lives 10 minutes. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;
/** A claimed credential is someone's to refresh for this long (a crashed process lets go). */
const CLAIM_MS = 2 * 60_000;
const REFRESH_CONCURRENCY = 8;
const REFRESH_BATCH = 500;

export interface OauthDeps {
  definitions: Definitions;
  access: AccountAccess;
  notifications: NotificationsService;
  requireInstance(ws: WorkspaceContext, id: string, ex?: Executor): Promise<InstanceRow>;
  assertWriter(ws: WorkspaceContext): void;
  audit(ex: Executor, actor: Actor, action: AuditAction, targetId: string, metadata?: Record<string, unknown>): Promise<void>;
}

interface TokenAnswer {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
}

class OauthFailure extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

/** OAuth linking (initiate, public callback) and the background token refresh. */
export function createOauthService(kernel: Kernel, deps: OauthDeps) {
  const { db, clock, secrets, config } = kernel;
  const fetchOut = () => guardedFetch({ allowPrivate: config.allowPrivateNetworks });
  // The versioned API prefix (http/server.ts API); spelled here so the service imports no HTTP.
  const callbackUrl = (key: string) => `${config.publicUrl}/api/v1/connectors/oauth/${encodeURIComponent(key)}/callback`;

  function ready(def: Definition) {
    const o = def.oauth;
    if (def.authKind !== 'oauth2' || !o) throw conflict(`${def.key} is not an OAuth connector`);
    if (!o.clientId || !o.authorizeUrl || !o.tokenUrl) throw new DomainError(503, 'NOT_CONFIGURED', `The ${def.key} connector has no OAuth client configured`);
    return o as Required<NonNullable<Definition['oauth']>> & { clientId: string; authorizeUrl: string; tokenUrl: string };
  }

  /** POSTs a token request (client_secret_post) and parses the answer, bounded in time and size. */
  async function tokenRequest(def: Definition, params: Record<string, string>): Promise<TokenAnswer> {
    const o = ready(def);
    const body = new URLSearchParams({ ...params, client_id: o.clientId, ...(o.clientSecret ? { client_secret: o.clientSecret } : {}) });
    let res: Response;
    try {
      res = await fetchOut()(o.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body });
    } catch (err) {
      throw new OauthFailure('provider_unreachable', `token endpoint unreachable: ${(err as Error).message}`);
    }
    const text = await readLimited(res, 256 * 1024).catch(() => '');
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = Object.fromEntries(new URLSearchParams(text));
    }
    if (!res.ok || typeof json.access_token !== 'string') {
      const code = typeof json.error === 'string' ? json.error : `http_${res.status}`;
      throw new OauthFailure(code === 'invalid_grant' ? 'invalid_grant' : 'token_exchange_failed', `token endpoint refused: ${code}`);
    }
    return { access_token: json.access_token, refresh_token: typeof json.refresh_token === 'string' ? json.refresh_token : undefined, expires_in: json.expires_in !== undefined ? Number(json.expires_in) : undefined, scope: typeof json.scope === 'string' ? json.scope : undefined };
  }

  function settingsUrl(query: Record<string, string>): string {
    // Always our own configured web URL: the redirect target never comes from the request.
    return `${config.webUrl}/settings/connectors?${new URLSearchParams(query).toString()}`;
  }

  return {
    /** Drops linking states that expired more than a day ago (used ones are kept that long too, for replay answers). */
    async pruneStates(now: Date): Promise<number> {
      const cutoff = new Date(now.getTime() - 24 * 3_600_000).toISOString();
      const res = await db.deleteFrom('connector_oauth_states').where('expires_at', '<', cutoff).executeTakeFirst();
      return Number(res.numDeletedRows);
    },

    /** Returns the provider's authorization URL and a state (single-use, 10 min, bound to user and instance). */
    async initiate(actor: Actor, instanceId: string) {
      deps.assertWriter(actor.ws);
      const instance = await deps.requireInstance(actor.ws, instanceId);
      const def = await deps.definitions.require(instance.connector_key, actor.ws.workspaceId);
      const o = ready(def);
      const state = randomToken(32);
      const stateHash = sha256Hex(state);
      const verifier = o.pkce ? randomToken(48) : null;
      const now = clock.now();
      await db
        .insertInto('connector_oauth_states')
        .values({ state_hash: stateHash, instance_id: instanceId, user_id: actor.principal.userId, connector_key: def.key, verifier_sealed: verifier ? seal(secrets, verifier, verifierContext(stateHash)) : null, expires_at: new Date(now.getTime() + OAUTH_STATE_TTL_MS).toISOString(), used_at: null, created_at: now.toISOString() })
        .execute();
      const url = new URL(o.authorizeUrl);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', o.clientId);
      url.searchParams.set('redirect_uri', callbackUrl(def.key));
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
    async callback(connectorKey: string, query: { code?: string; state?: string; error?: string }): Promise<string> {
      const fail = (reason: string, instanceId?: string) => settingsUrl({ connector: connectorKey, ...(instanceId ? { instanceId } : {}), status: 'error', reason });
      if (!query.state) return fail('missing_state');
      const stateHash = sha256Hex(query.state);
      const now = clock.now();
      const record = await db.selectFrom('connector_oauth_states').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
      if (!record || record.connector_key !== connectorKey) return fail('invalid_state');
      if (record.used_at) return fail('state_already_used', record.instance_id);
      if (record.expires_at <= now.toISOString()) return fail('state_expired', record.instance_id);
      const consumed = await db.updateTable('connector_oauth_states').set({ used_at: now.toISOString() }).where('state_hash', '=', stateHash).where('used_at', 'is', null).executeTakeFirst();
      if (Number(consumed.numUpdatedRows) !== 1) return fail('state_already_used', record.instance_id);
      if (query.error) return fail('provider_denied', record.instance_id);
      if (!query.code) return fail('missing_code', record.instance_id);
      const instance = await db.selectFrom('connector_instances').selectAll().where('id', '=', record.instance_id).executeTakeFirst();
      if (!instance) return fail('instance_gone');
      // The state is bound to its user: they must still be able to act in the instance's workspace.
      let ws: WorkspaceContext;
      try {
        ws = await deps.access.workspace({ userId: record.user_id, kind: 'session', scopes: null, clientId: null, sessionId: null, accountId: null, tokenId: null }, { workspaceId: instance.workspace_id });
        deps.assertWriter(ws);
      } catch {
        return fail('access_revoked', instance.id);
      }
      const def = await deps.definitions.get(connectorKey, instance.workspace_id);
      if (!def) return fail('unknown_connector', instance.id);
      let tokens: TokenAnswer;
      try {
        const verifier = record.verifier_sealed ? open(secrets, record.verifier_sealed, verifierContext(stateHash)) : null;
        tokens = await tokenRequest(def, { grant_type: 'authorization_code', code: query.code, redirect_uri: callbackUrl(connectorKey), ...(verifier ? { code_verifier: verifier } : {}) });
      } catch (err) {
        return fail(err instanceof OauthFailure ? err.reason : 'token_exchange_failed', instance.id);
      }
      const stored = clock.now();
      const values: Record<string, string> = { access_token: tokens.access_token, ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}) };
      const scopes = tokens.scope ? tokens.scope.split(' ').filter(Boolean) : (def.oauth?.scopes ?? []);
      await inTransaction(db, async (trx) => {
        const existing = await trx.selectFrom('connector_credentials').select(['id', 'created_at']).where('instance_id', '=', instance.id).executeTakeFirst();
        await trx.deleteFrom('connector_credentials').where('instance_id', '=', instance.id).execute();
        await trx
          .insertInto('connector_credentials')
          .values({
            id: existing?.id ?? newId(),
            instance_id: instance.id,
            cred_type: 'oauth2',
            // Linked tokens go only to the definition's token and check URLs, which the operator
            // sets and no member can change: no origin to bind (docs/connectors.md, Credentials).
            sealed_value: sealCredentials(secrets, instance.id, 'oauth2', values),
            origin: null,
            scopes: JSON.stringify(scopes),
            expires_at: tokens.expires_in ? new Date(stored.getTime() + tokens.expires_in * 1000).toISOString() : null,
            refresh_claim: null,
            refresh_claimed_until: null,
            created_at: existing?.created_at ?? stored.toISOString(),
            rotated_at: stored.toISOString(),
          })
          .execute();
        // Spec: pending_auth -> active on a successful callback, and re-initiating the flow is
        // how an instance in error recovers. An instance the team disabled stays inactive.
        await trx.updateTable('connector_instances').set({ status: 'active', health_message: null, updated_at: stored.toISOString() }).where('id', '=', instance.id).where('status', 'in', ['pending_auth', 'error']).execute();
        await deps.audit(trx, { principal: { userId: record.user_id, kind: 'session', scopes: null, clientId: null, sessionId: null, accountId: null, tokenId: null }, ws }, 'connector.oauth_linked', instance.id, { connectorKey, scopes });
      });
      return settingsUrl({ connector: connectorKey, instanceId: instance.id, status: 'success' });
    },

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
        const due = db
          .selectFrom('connector_credentials')
          .select('id')
          .where('instance_id', 'not in', db.selectFrom('connector_instances').select('id').where('status', '=', 'error'))
          .where('cred_type', '=', 'oauth2')
          .where('expires_at', 'is not', null)
          .where('expires_at', '<=', dueBefore)
          .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', nowIso)]))
          .limit(REFRESH_BATCH);
        const res = await db
          .updateTable('connector_credentials')
          .set({ refresh_claim: claim, refresh_claimed_until: new Date(now.getTime() + CLAIM_MS).toISOString() })
          .where('id', 'in', due)
          .where((eb) => eb.or([eb('refresh_claimed_until', 'is', null), eb('refresh_claimed_until', '<', nowIso)]))
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0) break;
        const rows = await db
          .selectFrom('connector_credentials')
          .innerJoin('connector_instances', 'connector_instances.id', 'connector_credentials.instance_id')
          .select(['connector_credentials.id', 'connector_credentials.instance_id', 'connector_credentials.sealed_value', 'connector_credentials.origin', 'connector_credentials.scopes', 'connector_instances.connector_key', 'connector_instances.workspace_id', 'connector_instances.created_by', 'connector_instances.display_name'])
          .where('connector_credentials.refresh_claim', '=', claim)
          .execute();
        claimed += rows.length;
        let next = 0;
        const worker = async () => {
          while (next < rows.length) {
            const row = rows[next++];
            try {
              const def = await deps.definitions.get(row.connector_key, row.workspace_id);
              if (!def) throw new OauthFailure('unknown_connector', 'the connector definition no longer exists');
              const values = openCredentials(secrets, row.instance_id, 'oauth2', row.sealed_value, row.origin);
              if (!values.refresh_token) throw new OauthFailure('no_refresh_token', 'no refresh token is stored; link the connector again');
              const tokens = await tokenRequest(def, { grant_type: 'refresh_token', refresh_token: values.refresh_token });
              const after = clock.now();
              const fresh = { access_token: tokens.access_token, refresh_token: tokens.refresh_token ?? values.refresh_token };
              await db
                .updateTable('connector_credentials')
                .set({
                  sealed_value: sealCredentials(secrets, row.instance_id, 'oauth2', fresh, row.origin),
                  expires_at: tokens.expires_in ? new Date(after.getTime() + tokens.expires_in * 1000).toISOString() : null,
                  scopes: tokens.scope ? JSON.stringify(tokens.scope.split(' ').filter(Boolean)) : row.scopes,
                  rotated_at: after.toISOString(),
                  // refresh_claimed_until stays: a token shorter-lived than the horizon is
                  // not refreshed again within this run.
                  refresh_claim: null,
                })
                .where('id', '=', row.id)
                .where('refresh_claim', '=', claim)
                .execute();
              refreshed++;
            } catch (err) {
              failed++;
              const message = `OAuth token refresh failed: ${(err as Error).message}`.slice(0, 500);
              await inTransaction(db, async (trx) => {
                // Let go of this run's claim (a later batch selects by it) but keep the lease time.
                await trx.updateTable('connector_credentials').set({ refresh_claim: null }).where('id', '=', row.id).where('refresh_claim', '=', claim).execute();
                const moved = await trx.updateTable('connector_instances').set({ status: 'error', health_message: message, updated_at: clock.now().toISOString() }).where('id', '=', row.instance_id).where('status', '=', 'active').executeTakeFirst();
                if (Number(moved.numUpdatedRows) === 1) {
                  await deps.notifications.notify(trx, {
                    userId: row.created_by,
                    title: `${row.display_name} needs attention`,
                    body: `Gantry could not refresh the ${row.connector_key} token of ${row.display_name}. Link it again to restore access.`,
                    category: 'system',
                    priority: 'high',
                    actionUrl: `${config.webUrl}/settings/connectors?connector=${encodeURIComponent(row.connector_key)}&instanceId=${row.instance_id}`,
                  });
                }
              });
              kernel.logger.warn('connector token refresh failed', { instanceId: row.instance_id, reason: err instanceof OauthFailure ? err.reason : 'error' });
            }
          }
        };
        await Promise.all(Array.from({ length: REFRESH_CONCURRENCY }, worker));
      }
      return { claimed, refreshed, failed };
    },
  };
}
