/**
 * The AAD context of every sealed column of the connectors domain, each written once: the
 * code that seals, the code that opens and the key rotation (rotation.ts) all call these, so
 * a drift between copies cannot leave values that no longer open.
 */

/**
 * An instance's credential: a value copied to another instance fails to open, and so does one
 * whose origin column was rewritten (the origin it was stored for is bound in).
 */
export const credentialContext = (instanceId: string, credType: string, origin: string | null = null) =>
  origin === null
    ? `connector_credentials:${instanceId}:${credType}`
    : `connector_credentials:${instanceId}:${credType}:${origin}`;

/** A member's own credential (per_user instances): bound to the instance and the user as well. */
export const userCredentialContext = (instanceId: string, userId: string, credType: string, origin: string | null) =>
  `connector_user_credentials:${instanceId}:${userId}:${credType}:${origin ?? ''}`;

/** A system definition's OAuth client secret, bound to its key. */
export const clientSecretContext = (definitionKey: string) => `connector_definitions:${definitionKey}:client_secret`;

/** A linking state's PKCE verifier, bound to the state's hash. */
export const verifierContext = (stateHash: string) => `connector_oauth_states:${stateHash}:verifier`;
/** A callback's code held for the linking member's confirmation (oauth-linking.ts). */
export const heldCodeContext = (stateHash: string) => `connector_oauth_states:${stateHash}:held_code`;

/** A parked tool call's input, bound to its approval. */
export const approvalInputContext = (approvalId: string) => `connector_tool_approvals:${approvalId}:input`;
