/** An OpenID provider the operator configured (`gantry idp add`; docs/identity-providers.md). */
export interface IdpsTable {
  id: string;
  name: string;
  /** The OpenID issuer identifier, exactly as its discovery document states it. */
  issuer: string;
  client_id: string;
  /** Sealed (src/lib/sealed.ts) under the context of the IdP's id. */
  client_secret_sealed: string;
  /** Where its just-in-time users become members; null when bound to no account. */
  account_id: string | null;
  /** The workspace of that account its ID-JAG tokens are bound to; null: the user's default one. */
  workspace_id: string | null;
  created_at: string;
}

/** An email domain whose addresses sign in through one IdP. */
interface IdpDomainsTable {
  domain: string;
  idp_id: string;
}

/** The IdP's subject linked to a user. */
export interface IdpLinksTable {
  idp_id: string;
  subject: string;
  user_id: string;
  created_at: string;
}

/** A session or an OAuth grant that came from an IdP: revoked with it. */
interface IdpIssuedTable {
  kind: 'session' | 'grant';
  ref_id: string;
  idp_id: string;
  created_at: string;
}

/** ID-JAG `jti`s already exchanged, kept until the assertion would have expired. */
interface IdpUsedAssertionsTable {
  key_hash: string;
  expires_at: string;
}

export interface IdpTables {
  idps: IdpsTable;
  idp_domains: IdpDomainsTable;
  idp_links: IdpLinksTable;
  idp_issued: IdpIssuedTable;
  idp_used_assertions: IdpUsedAssertionsTable;
}
