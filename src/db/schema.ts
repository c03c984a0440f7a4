import type { KernelTables } from './kernel-tables.js';
import type { IdentityTables } from '../identity/tables.js';
import type { AccountsTables } from '../accounts/tables.js';
import type { AuditTables } from '../audit/tables.js';
import type { WalletTables } from '../wallet/tables.js';
import type { BillingTables } from '../billing/tables.js';
import type { NotificationsTables } from '../notifications/tables.js';
import type { StatusTables } from '../status/tables.js';
import type { OAuthTables } from '../oauth/tables.js';
import type { ConnectorsTables } from '../connectors/tables.js';
import type { AiTables } from '../ai/tables.js';
import type { IdpTables } from '../idp/tables.js';

/** Every table of every domain, for kysely's typing. One line per domain. */
export interface DB
  extends KernelTables,
    IdentityTables,
    AccountsTables,
    AuditTables,
    WalletTables,
    BillingTables,
    NotificationsTables,
    StatusTables,
    OAuthTables,
    ConnectorsTables,
    AiTables,
    IdpTables {}
