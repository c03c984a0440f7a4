import { LRUCache } from 'lru-cache';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto.js';
import { isUuid, newId } from '../lib/ids.js';
import type { Kernel } from '../kernel.js';
import { showClient, type NamedClient } from './client-labels.js';
import {
  createMetadataDocuments,
  isMetadataDocumentId,
  type ClientLookup,
  type ClientProblem,
} from './metadata-documents.js';
import { opensBrowser, redirectUriMatches, redirectUriProblem } from './redirect-uris.js';
import { isScope, formatScope, SCOPE_NAMES } from './scopes.js';
import * as store from './store/index.js';
import type { ClientRow } from './store/index.js';
import type { OAuthTokens } from './tokens.js';
import { CLIENT_TYPES, type Client, type ClientType, type SelfRegisteredClient } from './types.js';

const CLIENT_CHANGED_TOPIC = 'oauth.client-changed';
/** A self-registered client that reached no grant within a day of registering (or of its document's last fetch) goes. */
const UNUSED_SELF_REGISTERED_MS = 24 * 3_600_000;

export interface NewClient {
  name: string;
  type: string;
  redirectUris: string[];
  scopes: string[];
}

/** A UUID (created here) or a metadata document's URL: anything else names no client. */
const isClientIdShape = (id: string) => isUuid(id) || isMetadataDocumentId(id);

function toClient(row: ClientRow): Client {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    // What it was registered with, self-registered clients included (docs/oauth.md, Self-registered clients).
    scopes: JSON.parse(row.scopes) as string[],
    secretHash: row.secret_hash,
    registration: row.registration,
    metadataExpiresAt: row.metadata_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What the CLI shows: never the secret hash. */
const presentClient = (client: Client) => ({
  clientId: client.id,
  name: client.name,
  type: client.type,
  registration: client.registration,
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

  /**
   * A client by id. A metadata document's client the operator's policy no longer takes (documents
   * switched off, its host not trusted) is no client at all: at authorize, token and revoke alike
   * (docs/oauth.md, Client ID Metadata Documents); the operator's CLI still sees its row.
   */
  async function find(id: string): Promise<Client | null> {
    if (!isClientIdShape(id)) return null;
    let hit = cache.get(id);
    if (!hit) {
      const row = await store.findClient(db, id);
      hit = { client: row ? toClient(row) : null };
      cache.set(id, hit);
    }
    const client = hit.client;
    return client?.registration === 'metadata_document' && !documents.allowed(id) ? null : client;
  }

  async function require(id: string): Promise<Client> {
    const client = await find(id);
    if (!client) throw notFound('Client');
    return client;
  }

  async function findRow(id: string) {
    const row = isClientIdShape(id) ? await store.findClient(db, id) : undefined;
    if (!row) throw notFound('Client');
    return row;
  }

  /** Stores a self-registered client (a metadata document's is refreshed in place). */
  async function saveSelfRegistered(client: SelfRegisteredClient): Promise<Client> {
    const now = clock.now().toISOString();
    const row = {
      id: client.id,
      name: client.name,
      type: 'public' as const,
      secret_hash: null,
      redirect_uris: JSON.stringify(client.redirectUris),
      scopes: JSON.stringify(formatScope(client.scopes).split(' ')),
      registration: client.registration,
      metadata_expires_at: client.metadataExpiresAt,
      created_at: now,
      updated_at: now,
    };
    await inTransaction(db, async (trx) => {
      if (client.registration === 'dynamic') await store.insertClient(trx, row);
      else await store.upsertMetadataClient(trx, row);
      await changes.publish(trx, CLIENT_CHANGED_TOPIC, client.id);
    });
    cache.delete(client.id);
    return require(client.id);
  }

  const lookup: ClientLookup = { find, saveSelfRegistered };
  const documents = createMetadataDocuments(kernel, lookup);

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
    saveSelfRegistered,

    /** A client's name as the pages show it, marked when self-registered (`kind` first: `Agent (MCP, unverified)`). */
    label: (client: NamedClient, kind?: string): string => showClient(client, kind).label,

    /**
     * The client an authorize request names: a stored one, or for a URL the metadata
     * document's, fetched when the stored copy is older than its cache lifetime.
     */
    async resolve(id: string): Promise<{ client: Client } | ClientProblem> {
      if (isMetadataDocumentId(id)) return documents.resolve(id);
      const client = await find(id);
      return client ? { client } : { problem: 'This application is not registered (unknown client_id).' };
    },

    /**
     * Exact match; a public client's loopback redirect on any port (docs/oauth.md, Redirect URIs).
     * Never a scheme that launches a browser, even one registered before that was refused.
     */
    redirectAllowed(client: Client, redirectUri: string): boolean {
      return (
        !opensBrowser(redirectUri) && redirectUriMatches(client.redirectUris, redirectUri, client.type === 'public')
      );
    },

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
          registration: 'cli',
          metadata_expires_at: null,
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
      return presentClient(toClient(await findRow(id)));
    },

    /** The clients an operator's word names (CLI): its id, or its exact name; several when names repeat. */
    async lookup(ref: string) {
      const name = ref.trim();
      return (await store.findClientsByIdOrName(db, name, isClientIdShape(name))).map((r) =>
        presentClient(toClient(r)),
      );
    },

    /** The grants deleting the client would revoke, counted for the operator's confirmation. */
    liveGrantCount: async (id: string) => store.countLiveGrantsOf(db, (await findRow(id)).id),

    /** A new secret; the old one stops working at once. Tokens already issued stay valid. */
    async rotateSecret(id: string) {
      const row = await findRow(id);
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
      await findRow(id);
      const revoked = await inTransaction(db, async (trx) => {
        const ids = await tokens.revokeGrants(trx, { clientId: id }, 'client_deleted');
        await store.deleteClient(trx, id);
        await changes.publish(trx, CLIENT_CHANGED_TOPIC, id);
        return ids.length;
      });
      logger.info('oauth client deleted', { clientId: id, revokedGrants: revoked });
      return { clientId: id, deleted: true, revokedGrants: revoked };
    },

    /** The purge job: self-registered clients never used for a grant (docs/oauth.md, Jobs). */
    async purgeUnused(now: Date): Promise<number> {
      const cutoff = new Date(now.getTime() - UNUSED_SELF_REGISTERED_MS).toISOString();
      const removed = await inTransaction(db, async (trx) => {
        const count = await store.deleteUnusedSelfRegisteredClients(trx, cutoff);
        if (count > 0) await changes.publish(trx, CLIENT_CHANGED_TOPIC, null);
        return count;
      });
      if (removed > 0) cache.clear();
      return removed;
    },

    /** Checks a presented secret against the stored SHA-256 in constant time. */
    secretMatches(client: Client, secret: string): boolean {
      return client.secretHash !== null && safeEqual(sha256Hex(secret), client.secretHash);
    },
  };
}

export type OAuthClients = ReturnType<typeof createClients>;
