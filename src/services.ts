import type { Plugin } from '@hapi/hapi';
import type { Kernel } from './kernel.js';
import { createIdentityService } from './identity/service.js';
import { createAuditService } from './audit/service.js';
import { createAccountsService } from './accounts/service.js';
import { createWalletService } from './wallet/service.js';
import { createNotificationsService } from './notifications/service.js';
import { createStatusService } from './status/service.js';
import { createOAuthService } from './oauth/service.js';
import { createConnectorsService } from './connectors/service.js';
import { createAiService } from './ai/service.js';
import { createMcpService } from './mcp/service.js';
import { createBillingService } from './billing/service.js';
import { createIdpService } from './idp/service.js';

/** Every domain service, built over the kernel. Domains reach each other only through these. */
export function createServices(kernel: Kernel) {
  const identity = createIdentityService(kernel);
  const audit = createAuditService(kernel, { identity });
  const notifications = createNotificationsService(kernel, { identity });
  const accounts = createAccountsService(kernel, { identity, notifications, audit });
  const wallet = createWalletService(kernel, { identity });
  const billing = createBillingService(kernel, { accounts, wallet, audit, identity });
  // Member removal with releaseSeat=true asks the provider for one seat fewer (docs/billing.md).
  if (billing.seatAdapter) accounts.useBillingAdapter(billing.seatAdapter);
  const status = createStatusService(kernel);
  const idp = createIdpService(kernel, { audit, accounts });
  const oauth = createOAuthService(kernel, { identity, accounts, assertions: idp.assertions });
  // Removing an identity provider ends at once what it gave (docs/identity-providers.md, Removal).
  idp.onRemoval('grants', async (trx, ids, reason) => {
    for (const id of ids) await oauth.tokens.revokeGrant(trx, id, reason);
    return ids.length;
  });
  idp.onRemoval('sessions', async (trx, ids, reason) => {
    for (const id of ids) await identity.sessions.revoke(trx, id, reason);
    return ids.length;
  });
  // A password reset or change, or a mailbox proven on an unconfirmed account, also ends the
  // user's third-party grants (docs/oauth.md, Revocation).
  identity.onSignInReset((trx, userId, reason, options) => oauth.revokeAllGrantsOfUser(trx, userId, reason, options));
  const connectors = createConnectorsService(kernel, {
    access: accounts.access,
    notifications,
    audit,
    secondFactors: identity.factors,
  });
  // A removed member's own connector links go with their membership (docs/connectors.md, Credential modes).
  accounts.onMembershipEnded((trx, ended) => connectors.forgetMemberLinks(trx, ended));
  const ai = createAiService(kernel, { accounts, identity, wallet });
  const mcp = createMcpService(kernel, { oauth, accounts, connectors, audit });
  return { identity, audit, accounts, wallet, billing, notifications, status, oauth, connectors, ai, mcp, idp };
}

export type Services = ReturnType<typeof createServices>;

/** What a domain's routes stand on: the kernel and the services (the app context is one). */
export interface PluginDeps {
  kernel: Kernel;
  services: Services;
}

/**
 * One domain's routes as a hapi plugin, registered with the deps as its options: the API ones
 * under the API prefix (src/http/paths.ts), the pages at the root (src/app.ts hands them to the
 * server).
 */
export type DomainPlugin = Plugin<PluginDeps>;
