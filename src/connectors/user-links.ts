import { DomainError } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import { open, seal } from '../lib/sealed.js';
import type { Secrets } from '../lib/secrets.js';
import type { Executor } from '../db/tx.js';
import type { CredentialReplacement } from './types.js';
import { userCredentialContext } from './sealing.js';
import { userCredentialStore } from './store/index.js';

/** docs/connectors.md, Credential modes. */
export const CREDENTIAL_MODES = ['shared', 'per_user'] as const;
export type CredentialMode = (typeof CREDENTIAL_MODES)[number];

export const isPerUser = (instance: { credential_mode: string }) => instance.credential_mode === 'per_user';

/** Where a member is sent to link their own account: the instance on the connector settings page. */
export const linkUrlOf = (webUrl: string, instance: { id: string; connector_key: string }) =>
  `${webUrl}/settings/connectors?${new URLSearchParams({ connector: instance.connector_key, instanceId: instance.id, action: 'link' }).toString()}`;

/**
 * A per_user instance called by a member without a usable link of their own: a 409 over REST,
 * an isError result (and a URL elicitation where the client takes one) over MCP.
 */
export class LinkRequired extends DomainError {
  constructor(
    readonly instanceId: string,
    readonly linkUrl: string,
    relinkReason: string | null,
  ) {
    const how = `link it with POST /connectors/instances/${instanceId}/oauth/initiate (settings: ${linkUrl})`;
    super(
      'CONFLICT',
      relinkReason
        ? `Your own link to this connector instance must be made again (${relinkReason}): ${how}`
        : `This connector instance uses each member's own account (credentialMode per_user) and you have not linked yours: ${how}`,
      [{ field: 'credentials', message: relinkReason ? 'relink_required' : 'link_required', type: 'connector.link' }],
    );
  }
}

export function sealUserCredentials(
  secrets: Secrets,
  instanceId: string,
  userId: string,
  credType: string,
  values: Record<string, string>,
  origin: string | null,
): string {
  return seal(secrets, JSON.stringify(values), userCredentialContext(instanceId, userId, credType, origin));
}

export function openUserCredentials(
  secrets: Secrets,
  row: { instance_id: string; user_id: string; cred_type: string; sealed_value: string; origin: string | null },
): Record<string, string> {
  return JSON.parse(
    open(secrets, row.sealed_value, userCredentialContext(row.instance_id, row.user_id, row.cred_type, row.origin)),
  ) as Record<string, string>;
}

/** The one way a member's own credential is replaced (stored through the API or linked through OAuth). */
export function replaceUserCredentials(
  ex: Executor,
  secrets: Secrets,
  userId: string,
  input: CredentialReplacement,
): Promise<{ id: string; replaced: boolean }> {
  return userCredentialStore.replace(
    ex,
    {
      instance_id: input.instanceId,
      user_id: userId,
      cred_type: input.credType,
      sealed_value: sealUserCredentials(secrets, input.instanceId, userId, input.credType, input.values, input.origin),
      origin: input.origin,
      scopes: input.scopes ? JSON.stringify(input.scopes) : null,
      expires_at: input.expiresAt,
      refresh_claim: null,
      refresh_claimed_until: null,
      relink_reason: null,
      rotated_at: input.at,
    },
    newId(),
  );
}

/**
 * The server refused a member's own token (401): their link waits for a re-link, and only
 * theirs (docs/connectors.md, Credential modes). Returns the refusal to throw.
 */
export async function relinkNeeded(
  ex: Executor,
  webUrl: string,
  instance: { id: string; connector_key: string },
  userId: string,
  reason: string,
): Promise<LinkRequired> {
  const row = await userCredentialStore.find(ex, instance.id, userId);
  if (row) await userCredentialStore.markRelink(ex, row.id, reason);
  return new LinkRequired(instance.id, linkUrlOf(webUrl, instance), row ? reason : null);
}

export const REFUSED_401 = 'the MCP server refused your token';
