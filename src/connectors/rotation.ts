import type { Kernel } from '../kernel.js';
import { reloadKeyring as reloadCredentialKeys, type SealedColumn } from '../lib/sealed-rotation.js';
import {
  approvalInputContext,
  clientSecretContext,
  credentialContext,
  heldCodeContext,
  userCredentialContext,
  verifierContext,
} from './sealing.js';

export { KEYRING_TOPIC } from '../lib/sealed-rotation.js';

/** The connectors domain's sealed columns, declared as the service's `sealed` for key rotation. */
export const CONNECTOR_SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'connector_credentials',
    keyColumn: 'id',
    column: 'sealed_value',
    contextColumns: ['instance_id', 'cred_type', 'origin'],
    context: (r) =>
      credentialContext(String(r.instance_id), String(r.cred_type), r.origin == null ? null : String(r.origin)),
  },
  {
    table: 'connector_user_credentials',
    keyColumn: 'id',
    column: 'sealed_value',
    contextColumns: ['instance_id', 'user_id', 'cred_type', 'origin'],
    context: (r) =>
      userCredentialContext(
        String(r.instance_id),
        String(r.user_id),
        String(r.cred_type),
        r.origin == null ? null : String(r.origin),
      ),
  },
  {
    table: 'connector_definitions',
    keyColumn: 'id',
    column: 'client_secret_sealed',
    contextColumns: ['key'],
    context: (r) => clientSecretContext(String(r.key)),
  },
  {
    table: 'connector_oauth_states',
    keyColumn: 'state_hash',
    column: 'verifier_sealed',
    contextColumns: [],
    context: (r) => verifierContext(String(r.state_hash)),
  },
  {
    table: 'connector_oauth_states',
    keyColumn: 'state_hash',
    column: 'held_code_sealed',
    contextColumns: [],
    context: (r) => heldCodeContext(String(r.state_hash)),
  },
  {
    table: 'connector_tool_approvals',
    keyColumn: 'id',
    column: 'input_sealed',
    contextColumns: [],
    context: (r) => approvalInputContext(String(r.id)),
  },
];

export function reloadKeyring(kernel: Kernel): void {
  reloadCredentialKeys(kernel).catch((err) => kernel.logger.error('credential keyring reload failed', { err }));
}
