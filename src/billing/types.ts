import type { AccountsService } from '../accounts/service.js';
import type { AuditService } from '../audit/service.js';
import type { IdentityService } from '../identity/service.js';
import type { WalletService } from '../wallet/service.js';

/** What the billing domain stands on (service.ts, webhook.ts). */
export interface BillingDeps {
  accounts: Pick<AccountsService, 'access' | 'show' | 'seatReleases'>;
  wallet: WalletService;
  audit: Pick<AuditService, 'record'>;
  identity: Pick<IdentityService, 'getUser'>;
}
