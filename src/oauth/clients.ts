import { LRUCache } from 'lru-cache';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto.js';
import { isUuid, newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import { isScope, formatScope, SCOPE_NAMES } from './scopes.js';
import * as store from './store.js';
import type { ClientRow } from './store.js';
import type { OAuthTokens } from './tokens.js';

const CLIENT_CHANGED_TOPIC = 'oauth.client-changed';
export const CLIENT_TYPES = ['confidential', 'public'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

export interface NewClient {
  name: string;
  type: string;
  redirectUris: string[];
  scopes: string[];
}

export interface Client {
  id: string;
  name: string;
  type: ClientType;
  redirectUris: string[];
  scopes: string[];
  secretHash: string | null;
  createdAt: string;
  updatedAt: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * A redirect URI a client may register: absolute, no fragment (RFC 6749 3.1.2), https unless
 * the host is loopback (RFC 8252 7.3; RFC 9700 2.1: no open redirectors, so no wildcards).
 */
function redirectUriProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not an absolute URL`;
  }
  if (url.hash || raw.includes('#')) return `"${raw}" must not carry a fragment`;
  if (url.username || url.password) return `"${raw}" must not carry credentials`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  if (url.protocol === 'http:') return `"${raw}" must use https (plain http is allowed only for loopback hosts)`;
  return `"${raw}" must be an https URL`;
}

function toClient(row: ClientRow): Client {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    scopes: JSON.parse(row.scopes) as string[],
    secretHash: row.secret_hash,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What the CLI shows: never the secret hash. */
const presentClient = (client: Client) => ({
  clientId: client.id,
  name: client.name,
  type: client.type,
  redirectUris: client.redirectUris,
  scopes: client.scopes,
  createdAt: client.createdAt,
  updatedAt: client.updatedAt,
});

/** Registered applications: the partner admin's CLI and the token endpoint's client authentication. */
export function createClients(kernel: Kernel, tokens: OAuthTokens) {
  const { db, clock, changes, logger } = kernel;
  // Hot path of every token request; a change anywhere (CLI included) clears it via the feed.
  const cache = new LRUCache<string, { client: Client | null }>({ max: 5_000, ttl: 30_000 });
  changes.subscribe(CLIENT_CHANGED_TOPIC, (id) => (id ? cache.delete(id) : cache.clear()));

  async function find(id: string): Promise<Client | null> {
    if (!isUuid(id)) return null;
    const hit = cache.get(id);
    if (hit) return hit.client;
    const row = await store.findClient(db, id);
    const client = row ? toClient(row) : null;
    cache.set(id, { client });
    return client;
  }

  async function require(id: string): Promise<Client> {
    const client = await find(id);
    if (!client) throw notFound('Client');
    return client;
  }

  function validate(input: NewClient): NewClient & { type: ClientType } {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 120) throw badRequest('name must be 1 to 120 characters');
    if (!(CLIENT_TYPES as readonly string[]).includes(input.type))
      throw badRequest('type must be confidential or public');
    const redirectUris = [...new Set(input.redirectUris.map((u) => u.trim()).filter(Boolean))];
    if (redirectUris.length === 0) throw badRequest('at least one redirect URI is required');
    for (const uri of redirectUris) {
      const problem = redirectUriProblem(uri);
      if (problem) throw badRequest(`redirect URI ${problem}`);
    }
    const scopes = [...new Set(input.scopes.flatMap((s) => s.split(/[\s,]+/)).filter(Boolean))];
    if (scopes.length === 0) throw badRequest('at least one scope is required');
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length > 0) throw badRequest(`unknown scope ${unknown.join(', ')}; allowed: ${SCOPE_NAMES.join(' ')}`);
    return { name, type: input.type as ClientType, redirectUris, scopes: formatScope(scopes).split(' ') };
  }

  return {
    find,
    require,

    /** Registers a client; the secret (confidential only) is returned here and never again. */
    async create(input: NewClient) {
      const clean = validate(input);
      const id = newId();
      const secret = clean.type === 'confidential' ? randomToken(32) : null;
      const now = clock.now().toISOString();
      await inTransaction(db, async (trx) => {
        await store.insertClient(trx, {
          id,
          name: clean.name,
          type: clean.type,
          secret_hash: secret ? sha256Hex(secret) : null,
          redirect_uris: JSON.stringify(clean.redirectUris),
          scopes: JSON.stringify(clean.scopes),
          created_at: now,
          updated_at: now,
        });
        await changes.publish(trx, CLIENT_CHANGED_TOPIC, id);
      });
      return {
        clientId: id,
        clientSecret: secret,
        name: clean.name,
        type: clean.type,
        redirectUris: clean.redirectUris,
        scopes: clean.scopes,
      };
    },

    async list() {
      return (await store.listClients(db)).map((row) => presentClient(toClient(row)));
    },

    async show(id: string) {
      const row = isUuid(id) ? await store.findClient(db, id) : undefined;
      if (!row) throw notFound('Client');
      return presentClient(toClient(row));
    },

    /** A new secret; the old one stops working at once. Tokens already issued stay valid. */
    async rotateSecret(id: string) {
      const row = isUuid(id) ? await store.findClient(db, id) : undefined;
      if (!row) throw notFound('Client');
      if (row.type !== 'confidential') throw conflict('Public clients have no secret');
      const secret = randomToken(32);
      await inTransaction(db, async (trx) => {
        await store.setClientSecret(trx, id, sha256Hex(secret), clock.now().toISOString());
        await changes.publish(trx, CLIENT_CHANGED_TOPIC, id);
      });
      return { clientId: id, clientSecret: secret };
    },

    /** Deletes a client: its grants are revoked (every token stops at once), then the rows go. */
    async remove(id: string) {
      const row = isUuid(id) ? await store.findClient(db, id) : undefined;
      if (!row) throw notFound('Client');
      const revoked = await inTransaction(db, async (trx) => {
        const ids = await tokens.revokeGrants(trx, { clientId: id }, 'client_deleted');
        await store.deleteClient(trx, id);
        await changes.publish(trx, CLIENT_CHANGED_TOPIC, id);
        return ids.length;
      });
      logger.info('oauth client deleted', { clientId: id, revokedGrants: revoked });
      return { clientId: id, deleted: true, revokedGrants: revoked };
    },

    /** Checks a presented secret against the stored SHA-256 in constant time. */
    secretMatches(client: Client, secret: string): boolean {
      return client.secretHash !== null && safeEqual(sha256Hex(secret), client.secretHash);
    },
  };
}

export type OAuthClients = ReturnType<typeof createClients>;
