import type { Logger } from './logger.js';

/** What the operator of a node without a rotated key must do (docs/postgres.md, Secrets). */
export const missingKeyMessage = (keyId: string) =>
  `Credential key "${keyId}" is not in this server's keyring, so a value sealed with it cannot be opened. ` +
  'An operator must give this server the key: on PostgreSQL every node needs the same GANTRY_SECRET_CREDENTIAL_KEY ' +
  'and reads rotated keys from the database at start (restart the node); on one machine, secrets.json must hold it.';

/** Reports a credential key this node lacks (MissingCredentialKeyError's keyId), never key material. */
export type MissingKeyReport = (keyId: string) => void;

/**
 * One report per missing key for the process, whichever answer met it first (a REST 503, an
 * MCP tool result): every request opening such a value would otherwise log it again.
 */
export function createMissingKeyReport(logger: Logger): MissingKeyReport {
  const reported = new Set<string>();
  return (keyId) => {
    if (reported.has(keyId)) return;
    reported.add(keyId);
    logger.error('credential key missing', { keyId, action: missingKeyMessage(keyId) });
  };
}
