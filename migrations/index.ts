import type { Migration } from './types.js';
import { migration as m0001 } from './0001_kernel.js';
import { migration as m0002 } from './0002_accounts.js';
import { migration as m0003 } from './0003_wallet.js';
import { migration as m0009 } from './0009_ai.js';

/** Every migration, in order. Static imports: the bundle cannot scan a folder. */
export const migrations: readonly Migration[] = [m0001, m0002, m0003, m0009];
