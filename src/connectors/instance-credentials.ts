import { inTransaction, type Executor } from '../db/tx.js';
import type { CredentialReplacement } from './types.js';
import type { AuditService } from '../audit/service.js';
import { notFound } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import type { Secrets } from '../lib/secrets.js';
import { credentialTarget, type ConnectorsContext } from './context.js';
import { assertCredentialKeys, sealCredentials } from './credentials.js';
import { presentCredentialRecord, presentCredentialStatus, presentUserCredentialStatus } from './presenters.js';
import { credentialStore, instanceStore, userCredentialStore } from './store/index.js';
import { isPerUser, replaceUserCredentials } from './user-links.js';
import type { Actor, CredType } from './types.js';

/**
 * The one way an instance's credentials are replaced (stored through the API or linked
 * through OAuth): sealed for the instance, type and origin; the row keeps its id and
 * created_at across replacements. Returns the row's id and whether one was replaced.
 */
export function replaceCredentials(
  ex: Executor,
  secrets: Secrets,
  input: CredentialReplacement,
): Promise<{ id: string; replaced: boolean }> {
  return credentialStore.replace(
    ex,
    {
      instance_id: input.instanceId,
      cred_type: input.credType,
      sealed_value: sealCredentials(secrets, input.instanceId, input.credType, input.values, input.origin),
      origin: input.origin,
      scopes: input.scopes ? JSON.stringify(input.scopes) : null,
      expires_at: input.expiresAt,
      refresh_claim: null,
      refresh_claimed_until: null,
      rotated_at: input.at,
    },
    newId(),
  );
}

/** Credentials of an instance through the API: store (replace), status, delete. */
export function createInstanceCredentials(ctx: ConnectorsContext, audit: AuditService) {
  const { db, clock, secrets } = ctx.kernel;

  return {
    /**
     * A member's reach into workspaces ended (removed from the account or a workspace): their
     * own links there are deleted in the same transaction, one audit row per instance
     * (docs/connectors.md, Credential modes). Registered with the accounts service.
     */
    async forgetMemberLinks(
      trx: Executor,
      ended: { accountId: string; userId: string; workspaceIds: string[]; by: { userId: string } | null },
    ) {
      if (ended.workspaceIds.length === 0) return;
      const links = await userCredentialStore.listOfUserIn(trx, ended.userId, ended.workspaceIds);
      if (links.length === 0) return;
      await userCredentialStore.deleteByIds(
        trx,
        links.map((l) => l.id),
      );
      for (const link of links)
        await audit.record(trx, ended.by, {
          accountId: ended.accountId,
          action: 'connector.credentials_deleted',
          targetId: link.instance_id,
          metadata: {
            credType: link.cred_type,
            credentialMode: 'per_user',
            userId: ended.userId,
            reason: 'member_removed',
          },
        });
    },

    async storeCredentials(
      actor: Actor,
      id: string,
      input: { credType: CredType; credentials: Record<string, unknown>; scopes?: string[] },
    ) {
      ctx.assertWriter(actor.ws);
      const instance = await ctx.requireInstance(actor.ws, id);
      assertCredentialKeys(input.credType, input.credentials);
      const values = input.credentials as Record<string, string>;
      const now = clock.now().toISOString();
      const origin = credentialTarget(
        await ctx.definitions.get(instance.connector_key, actor.ws.workspaceId),
        JSON.parse(instance.config) as Record<string, unknown>,
      );
      const expiresIn = input.credType === 'oauth2' && values.expires_in ? Number(values.expires_in) : NaN;
      const expiresAt = Number.isFinite(expiresIn)
        ? new Date(clock.now().getTime() + expiresIn * 1000).toISOString()
        : values.expires_at && !Number.isNaN(Date.parse(values.expires_at))
          ? new Date(values.expires_at).toISOString()
          : null;
      const replacement = {
        instanceId: id,
        credType: input.credType,
        values,
        origin,
        scopes: input.scopes ?? null,
        expiresAt: input.credType === 'oauth2' ? expiresAt : null,
        at: now,
      };
      // per_user: the caller's own credential (docs/connectors.md, Credential modes).
      const own = isPerUser(instance);
      return inTransaction(db, async (trx) => {
        const { id: credId, replaced } = own
          ? await replaceUserCredentials(trx, secrets, actor.principal.userId, replacement)
          : await replaceCredentials(trx, secrets, replacement);
        await ctx.audit(trx, actor, 'connector.credentials_stored', id, {
          credType: input.credType,
          replaced,
          origin,
          ...(own ? { credentialMode: 'per_user' } : {}),
        });
        return presentCredentialRecord({ id: credId, instance_id: id, cred_type: input.credType, rotated_at: now });
      });
    },

    /** The instance's credential, or in per_user mode the caller's own link. */
    async credentialStatus(actor: Actor, id: string) {
      const instance = await ctx.requireInstance(actor.ws, id);
      if (isPerUser(instance))
        return presentUserCredentialStatus(await userCredentialStore.find(db, id, actor.principal.userId));
      return presentCredentialStatus(await credentialStore.find(db, id));
    },

    /** docs/interface.md, States: "any | DELETE credentials | credentials removed -> pending_auth". */
    async deleteCredentials(actor: Actor, id: string) {
      ctx.assertWriter(actor.ws);
      const instance = await ctx.requireInstance(actor.ws, id);
      // per_user: the caller unlinks their own account; the instance and the others' links stay.
      if (isPerUser(instance))
        return inTransaction(db, async (trx) => {
          const existing = await userCredentialStore.find(trx, id, actor.principal.userId);
          if (!existing) throw notFound('Credentials');
          await userCredentialStore.delete(trx, id, actor.principal.userId);
          await ctx.audit(trx, actor, 'connector.credentials_deleted', id, {
            credType: existing.cred_type,
            credentialMode: 'per_user',
            reason: 'unlinked',
          });
          return presentCredentialRecord({ ...existing, rotated_at: clock.now().toISOString() });
        });
      return inTransaction(db, async (trx) => {
        const existing = await credentialStore.find(trx, id);
        if (!existing) throw notFound('Credentials');
        await credentialStore.delete(trx, id);
        await instanceStore.update(trx, id, { status: 'pending_auth', updated_at: clock.now().toISOString() });
        await ctx.audit(trx, actor, 'connector.credentials_deleted', id, { credType: existing.cred_type });
        return presentCredentialRecord({ ...existing, rotated_at: clock.now().toISOString() });
      });
    },
  };
}
