import type { Migration } from './types.js';
import { migration as m0001 } from './0001_kernel.js';
import { migration as m0002 } from './0002_accounts.js';
import { migration as m0003 } from './0003_wallet.js';
import { migration as m0004 } from './0004_oauth.js';
import { migration as m0005 } from './0005_accounts_extras.js';
import { migration as m0006 } from './0006_notifications.js';
import { migration as m0007 } from './0007_status.js';
import { migration as m0008 } from './0008_connectors.js';
import { migration as m0009 } from './0009_ai.js';
import { migration as m0010 } from './0010_connector_credential_origin.js';
import { migration as m0011 } from './0011_connector_approval_target.js';
import { migration as m0012 } from './0012_connector_definition_scope.js';
import { migration as m0013 } from './0013_canonical_emails.js';
import { migration as m0014 } from './0014_connector_tool_settings.js';
import { migration as m0015 } from './0015_oauth_client_registration.js';
import { migration as m0016 } from './0016_oauth_resource_workspace.js';
import { migration as m0017 } from './0017_connector_mcp_approvals.js';
import { migration as m0018 } from './0018_billing_stripe.js';
import { migration as m0019 } from './0019_connector_credential_mode.js';
import { migration as m0020 } from './0020_uniqueness_and_member_order.js';
import { migration as m0021 } from './0021_cluster_jobs.js';
import { migration as m0022 } from './0022_cluster_limits_keyring.js';
import { migration as m0023 } from './0023_connector_trust.js';
import { migration as m0024 } from './0024_status_subscriptions.js';
import { migration as m0025 } from './0025_second_factors.js';
import { migration as m0026 } from './0026_identity_providers.js';

/** Every migration, in order. Static imports: the bundle cannot scan a folder. */
export const migrations: readonly Migration[] = [
  m0001,
  m0002,
  m0003,
  m0004,
  m0005,
  m0006,
  m0007,
  m0008,
  m0009,
  m0010,
  m0011,
  m0012,
  m0013,
  m0014,
  m0015,
  m0016,
  m0017,
  m0018,
  m0019,
  m0020,
  m0021,
  m0022,
  m0023,
  m0024,
  m0025,
  m0026,
];
