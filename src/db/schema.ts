import type { KernelTables } from './kernel-tables.js';
import type { IdentityTables } from '../identity/tables.js';
import type { AccountsTables } from '../accounts/tables.js';
import type { WalletTables } from '../wallet/tables.js';
import type { AiTables } from '../ai/tables.js';

/** Every table of every domain, for kysely's typing. One line per domain. */
export interface DB extends KernelTables, IdentityTables, AccountsTables, WalletTables, AiTables {}
