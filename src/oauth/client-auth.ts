import type { OAuthClients } from './clients.js';
import type { Client } from './types.js';
import { invalidClient, invalidRequest } from './errors.js';

export interface ClientCredentials {
  authorization?: string;
  body: Record<string, unknown>;
}

export interface AuthenticatedClient {
  client: Client;
  usedBasic: boolean;
}

/** RFC 6749 2.3.1: Basic credentials are application/x-www-form-urlencoded before base64. */
function formDecode(value: string): string | null {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * The client_id and secret of an HTTP Basic Authorization header (RFC 6749 2.3.1: each
 * form-urlencoded, then joined by a colon and base64-encoded); a part is null when it can't be
 * read. Undefined when the header is not Basic. Both what failures are counted against and what
 * is authenticated read the header here, so they always name the same client_id.
 */
function basicCredentials(header: string | undefined): { id: string | null; secret: string | null } | undefined {
  if (header === undefined || !/^basic\s/i.test(header)) return undefined;
  const decoded = Buffer.from(header.replace(/^basic\s+/i, '').trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { id: null, secret: null };
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

function single(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidRequest(`${name} must be given once`);
  return value;
}

/**
 * The client_id a request claims (HTTP Basic user, else the body), before anything is
 * checked: what failed authentication is counted against (endpoint-limits.ts).
 */
export function claimedClientId(credentials: ClientCredentials): string | null {
  const basic = basicCredentials(credentials.authorization);
  if (basic) return basic.id;
  const id = credentials.body.client_id;
  return typeof id === 'string' ? id : null;
}

/**
 * Client authentication for the token and revoke endpoints: client_secret_basic for
 * confidential clients, `none` (client_id in the body) for public ones. One method per
 * request (RFC 6749 2.3); secrets in the body (client_secret_post) are not supported.
 */
export async function authenticateClient(
  clients: OAuthClients,
  credentials: ClientCredentials,
): Promise<AuthenticatedClient> {
  const header = credentials.authorization;
  const bodyClientId = single(credentials.body, 'client_id');
  if (credentials.body.client_secret !== undefined)
    throw invalidClient(false, 'client_secret in the body is not supported; use HTTP Basic (client_secret_basic)');

  const basic = basicCredentials(header);
  if (basic) {
    const { id, secret } = basic;
    if (id === null || secret === null) throw invalidClient(true, 'Malformed HTTP Basic credentials');
    if (bodyClientId !== undefined && bodyClientId !== id)
      throw invalidRequest('client_id in the body differs from the authenticated client');
    const client = await clients.find(id);
    if (!client || client.type !== 'confidential' || !clients.secretMatches(client, secret)) throw invalidClient(true);
    return { client, usedBasic: true };
  }
  if (header !== undefined && header !== '') throw invalidClient(false, 'Unsupported client authentication scheme');

  if (bodyClientId === undefined || bodyClientId === '')
    throw invalidClient(false, 'Client authentication is required (HTTP Basic, or client_id for public clients)');
  const client = await clients.find(bodyClientId);
  if (!client) throw invalidClient(false);
  // A confidential client must prove itself; a client_id alone is not authentication.
  if (client.type !== 'public') throw invalidClient(false, 'This client must authenticate with HTTP Basic');
  return { client, usedBasic: false };
}
