import type { ClientRegistration } from './tables.js';

/** The scopes in plain words, for pages of other domains that list a grant (the account center). */
export { SCOPES } from './scopes.js';

/** OAuth clients as the domain and its neighbours see them (clients.ts keeps them). */
export const CLIENT_TYPES = ['confidential', 'public'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

/** A client as the domain uses it (never its secret, only the secret's hash). */
export interface Client {
  id: string;
  name: string;
  type: ClientType;
  redirectUris: string[];
  scopes: string[];
  secretHash: string | null;
  registration: ClientRegistration;
  metadataExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A self-registered public client as it is stored (RFC 7591 registration or a metadata document). */
export interface SelfRegisteredClient {
  id: string;
  name: string;
  redirectUris: string[];
  scopes: string[];
  registration: 'dynamic' | 'metadata_document';
  metadataExpiresAt: string | null;
}
