import { inTransaction, type Executor } from '../db/tx.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import { open, seal } from '../lib/sealed.js';
import type { SealedValues } from '../lib/sealed-rotation.js';
import type { Kernel } from '../kernel.js';
import type { AuditService } from '../audit/service.js';
import { OPERATOR, type Operator } from '../accounts/access.js';
import { createProviderClients, isLoopbackIssuer, type IdpClientSettings } from './provider-client.js';
import { createIdJagExchange, type WorkspaceFinder } from './exchange.js';
import * as store from './store.js';

export interface NewIdp {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  domains?: string[];
  accountId?: string | null;
  /** A workspace of `accountId` that its ID-JAG tokens are bound to (else the user's default one). */
  workspaceId?: string | null;
}

/** What an IdP's removal ends (the hooks services.ts registers: sessions in identity, grants in oauth). */
export type IssuedRevoker = (trx: Executor, ids: string[], reason: string) => Promise<number>;

/** Where a sign-in page's "Continue with {name}" goes (src/idp/sso-routes.ts). */
export const SSO_START_PATH = '/auth/sso/start';

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const secretContext = (idpId: string) => `idp:${idpId}:client_secret`;

const presentIdp = (row: store.IdpRow, domains: string[]) => ({
  id: row.id,
  name: row.name,
  issuer: row.issuer,
  clientId: row.client_id,
  domains,
  accountId: row.account_id,
  workspaceId: row.workspace_id,
  createdAt: row.created_at,
});

/**
 * Enterprise identity providers (docs/identity-providers.md): the operator's list of OpenID
 * providers, their users' links, SSO sign-in's settings and the ID-JAG exchange.
 */
export function createIdpService(
  kernel: Kernel,
  deps: {
    audit: AuditService;
    accounts: WorkspaceFinder & {
      get(accountId: string): Promise<unknown>;
      workspaces: { list(caller: Operator, accountId: string): Promise<Array<{ id: string }>> };
    };
  },
) {
  const { db, clock, secrets } = kernel;
  const providers = createProviderClients(clock);
  const revokers: { sessions?: IssuedRevoker; grants?: IssuedRevoker } = {};

  function settingsOf(row: store.IdpRow): IdpClientSettings {
    return {
      issuer: row.issuer,
      clientId: row.client_id,
      clientSecret: open(secrets, row.client_secret_sealed, secretContext(row.id)),
    };
  }

  function normalizedDomains(raw: readonly string[]): string[] {
    const domains = [...new Set(raw.map((d) => d.trim().toLowerCase().replace(/^@/, '')))].filter((d) => d !== '');
    const bad = domains.find((d) => !DOMAIN.test(d));
    if (bad !== undefined) throw badRequest(`"${bad}" is not an email domain (example.com)`);
    return domains;
  }

  async function domainsByIdp(executor: Executor = db): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const row of await store.listDomains(executor))
      out.set(row.idp_id, [...(out.get(row.idp_id) ?? []), row.domain]);
    return out;
  }

  const exchange = createIdJagExchange({
    kernel,
    audit: deps.audit,
    accounts: deps.accounts,
    keysOf: async (row) => {
      const metadata = (await providers.configuration(row.id, settingsOf(row))).serverMetadata();
      if (!metadata.jwks_uri) throw new Error('the identity provider publishes no jwks_uri');
      return providers.keys(row.id, metadata.jwks_uri);
    },
  });

  return {
    providers,
    settingsOf,
    /** The ID-JAG grant's side (src/oauth/grants/jwt-bearer.ts). */
    assertions: exchange,

    /** The client secrets are sealed: key rotation re-seals them (src/lib/sealed-rotation.ts). */
    sealed: {
      columns: [
        {
          table: 'idps',
          keyColumn: 'id',
          column: 'client_secret_sealed',
          contextColumns: [],
          context: (r) => secretContext(String(r.id)),
        },
      ],
    } satisfies SealedValues,

    /** `gantry idp remove` ends what the IdP gave: hooks for the sessions and the grants. */
    onRemoval(kind: 'sessions' | 'grants', revoke: IssuedRevoker): void {
      revokers[kind] = revoke;
    },

    /**
     * Adds an IdP: its discovery document is fetched first (openid-client checks that it names
     * this issuer), outside any transaction; then the row, the secret sealed, and its domains.
     */
    async add(input: NewIdp) {
      const name = input.name.trim();
      if (name === '' || name.length > 80) throw badRequest('name must be 1 to 80 characters');
      let issuerUrl: URL;
      try {
        issuerUrl = new URL(input.issuer);
      } catch {
        throw badRequest('issuer must be an absolute URL');
      }
      if (issuerUrl.protocol !== 'https:' && !(issuerUrl.protocol === 'http:' && isLoopbackIssuer(issuerUrl)))
        throw badRequest('issuer must be https (plain http only on a loopback address)');
      if (input.clientId.trim() === '' || input.clientSecret === '')
        throw badRequest('client id and client secret are required');
      const domains = normalizedDomains(input.domains ?? []);
      if (input.accountId) await deps.accounts.get(input.accountId);
      if (input.workspaceId) {
        // The operator's rule for ID-JAG tokens: a workspace of the account the IdP is bound to.
        if (!input.accountId) throw badRequest('a workspace needs the account it belongs to (--account)');
        const workspaces = await deps.accounts.workspaces.list(OPERATOR, input.accountId);
        if (!workspaces.some((w) => w.id === input.workspaceId))
          throw badRequest(`workspace ${input.workspaceId} is not a workspace of account ${input.accountId}`);
      }
      let issuer: string;
      try {
        const discovered = await providers.discover({
          issuer: input.issuer,
          clientId: input.clientId,
          clientSecret: input.clientSecret,
        });
        issuer = discovered.serverMetadata().issuer;
      } catch (err) {
        throw badRequest(`OpenID Connect discovery of ${input.issuer} failed: ${(err as Error).message}`);
      }
      const id = newId();
      return inTransaction(db, async (trx) => {
        if (await store.findIdpByName(trx, name)) throw conflict(`An identity provider is already named "${name}"`);
        if (await store.findIdpByIssuer(trx, issuer)) throw conflict(`The issuer ${issuer} is already configured`);
        for (const domain of domains)
          if (await store.findDomain(trx, domain))
            throw conflict(`${domain} already signs in through another identity provider`);
        const row = {
          id,
          name,
          issuer,
          client_id: input.clientId.trim(),
          client_secret_sealed: seal(secrets, input.clientSecret, secretContext(id)),
          account_id: input.accountId ?? null,
          workspace_id: input.workspaceId ?? null,
          created_at: clock.now().toISOString(),
        };
        await store.insertIdp(trx, row);
        for (const domain of domains) await store.insertDomain(trx, id, domain);
        return presentIdp(row, domains);
      });
    },

    async list() {
      const [rows, domains] = await Promise.all([store.listIdps(db), domainsByIdp()]);
      return rows.map((row) => presentIdp(row, domains.get(row.id) ?? []));
    },

    /** An IdP by id or exact name; 404 otherwise. */
    async find(ref: string) {
      const row = (await store.findIdp(db, ref)) ?? (await store.findIdpByName(db, ref));
      if (!row) throw notFound('Identity provider');
      return presentIdp(row, (await domainsByIdp()).get(row.id) ?? []);
    },

    /**
     * The sign-in pages' "Continue with {name}" links, each continuing at `returnTo`; with an
     * email, the link of the IdP its domain is bound to (null when none).
     */
    async signInLinks(returnTo: string): Promise<Array<{ name: string; href: string }>> {
      return (await store.listIdps(db)).map((r) => ({
        name: r.name,
        href: `${SSO_START_PATH}?${new URLSearchParams({ idp: r.id, return_to: returnTo })}`,
      }));
    },
    async signInLinkFor(email: string, returnTo: string): Promise<string | null> {
      const bound = await this.forEmail(email);
      return bound ? `${SSO_START_PATH}?${new URLSearchParams({ idp: bound.id, return_to: returnTo })}` : null;
    },

    /** Every IdP with its domains, as the sign-in pages list them. */
    rows: () => store.listIdps(db),
    findRow: (id: string) => store.findIdp(db, id),
    /** The IdP an email's domain is bound to; null when none. */
    async forEmail(email: string): Promise<store.IdpRow | null> {
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      const bound = await store.findDomain(db, domain);
      return bound ? ((await store.findIdp(db, bound.idp_id)) ?? null) : null;
    },
    boundDomains: async (idpId: string) => (await domainsByIdp()).get(idpId) ?? [],

    /**
     * Removes an IdP and, in the same transaction, everything it gave: the sessions signed in
     * through it and the grants its ID-JAGs made (revoked at once), and its users' links (no
     * ID-JAG of it is accepted any more). The users themselves stay (docs/identity-providers.md, Removal).
     */
    async remove(ref: string) {
      const target = await this.find(ref);
      const outcome = await inTransaction(db, async (trx) => {
        const issued = await store.listIssued(trx, target.id);
        const ids = (kind: 'session' | 'grant') => issued.filter((i) => i.kind === kind).map((i) => i.ref_id);
        const revokedSessions = (await revokers.sessions?.(trx, ids('session'), 'idp_removed')) ?? 0;
        const revokedGrants = (await revokers.grants?.(trx, ids('grant'), 'idp_removed')) ?? 0;
        const unlinked = Number((await store.deleteLinksOf(trx, target.id)).numDeletedRows);
        await store.deleteIssuedOf(trx, target.id);
        await store.deleteDomainsOf(trx, target.id);
        await store.deleteIdp(trx, target.id);
        return { id: target.id, name: target.name, revokedSessions, revokedGrants, unlinkedUsers: unlinked };
      });
      providers.forget(target.id);
      return outcome;
    },

    /** The user an IdP subject is linked to; null when none. */
    linkedUser: async (idpId: string, subject: string, executor: Executor = db) =>
      (await store.findLink(executor, idpId, subject))?.user_id ?? null,

    /** Links an IdP subject to a user (SSO's first sign-in; the operator's tooling). */
    link: (idpId: string, subject: string, userId: string, executor: Executor = db) =>
      store.insertLink(executor, { idp_id: idpId, subject, user_id: userId, created_at: clock.now().toISOString() }),

    /** Records that a session came from an IdP (SSO sign-in), on its own. */
    recordIssuedNow: (idpId: string, kind: 'session' | 'grant', refId: string) =>
      store.recordIssued(db, idpId, kind, refId, clock.now().toISOString()),

    /** Records that a session or grant came from an IdP, in the caller's transaction. */
    recordIssued: (trx: Executor, idpId: string, kind: 'session' | 'grant', refId: string) =>
      store.recordIssued(trx, idpId, kind, refId, clock.now().toISOString()),

    /** Housekeeping: spent ID-JAG jtis past their expiry. */
    purgeUsedAssertions: (now: Date) => store.deleteExpiredAssertions(db, now.toISOString()),
  };
}

export type IdpService = ReturnType<typeof createIdpService>;
