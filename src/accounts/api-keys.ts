import type { BearerVerifier, Principal } from '../http/auth.js';
import { forbidden, notFound } from '../http/errors.js';
import { inTransaction } from '../db/tx.js';
import { newId } from '../lib/ids.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { restrictedTo, type Caller } from './access.js';
import { LIVE, liveAccount, type AccountsDeps } from './context.js';
import { presentApiKey } from './presenters.js';
import { ANY_MEMBER } from './roles.js';
import * as store from './store/index.js';

/** Every enterprise key starts with this, so the verifier recognises its own tokens. */
const API_KEY_PREFIX = 'gak_';
/** last_used_at is written at most this often per key (a write per request would cost more than the request). */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Enterprise API keys: owned by a member, shown once at creation, stored as SHA-256 only.
 * Used as a bearer token on account endpoints, a key acts as its owner with the owner's
 * current role; it stops working when revoked, when its owner leaves the account, or when
 * the account is deleted.
 */
export function createApiKeys(deps: AccountsDeps) {
  const { db, clock } = deps.kernel;
  const audit = deps.audit.record;
  const { authorize } = deps.access;

  const verifier: BearerVerifier = {
    name: 'account-api-key',
    async verify(token) {
      if (!token.startsWith(API_KEY_PREFIX)) return undefined;
      const row = await store.findKeyByHash(db, sha256Hex(token));
      if (!row || row.revoked_at !== null || !LIVE.includes(row.account_status) || row.member_status !== 'active')
        return null;
      const now = clock.now();
      if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > TOUCH_INTERVAL_MS) {
        await store.touchKey(db, row.id, now.toISOString());
      }
      const principal: Principal = {
        userId: row.user_id,
        kind: 'api_key',
        scopes: null,
        clientId: null,
        sessionId: null,
        accountId: row.account_id,
        tokenId: row.id,
      };
      return principal;
    },
  };

  return {
    verifier,

    /** A new key for the acting member; the only time the whole key is ever returned. */
    async create(principal: Principal, accountId: string, name: string) {
      const ownerId = (await authorize(principal, accountId, ANY_MEMBER)).actor.userId;
      return inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const member = await store.findMember(trx, accountId, ownerId);
        if (!member || member.status !== 'active') throw forbidden('Only active members can own API keys');
        const key = `${API_KEY_PREFIX}${randomToken(30)}`;
        const row = {
          id: newId(),
          account_id: accountId,
          user_id: ownerId,
          name,
          key_prefix: key.slice(0, API_KEY_PREFIX.length + 8),
          last_four: key.slice(-4),
          key_hash: sha256Hex(key),
          created_at: clock.now().toISOString(),
          last_used_at: null,
          revoked_at: null,
          revoke_reason: null,
        };
        await store.insertKey(trx, row);
        await audit(
          trx,
          { userId: ownerId },
          {
            accountId,
            action: 'api_key.created',
            targetId: row.id,
            metadata: { name, keyPrefix: row.key_prefix, lastFour: row.last_four },
          },
        );
        return { ...presentApiKey(row), key };
      });
    },

    /** Owners and admins see every key of the account; other members their own. */
    async list(caller: Caller, accountId: string) {
      const auth = await authorize(caller, accountId, ANY_MEMBER);
      const rows = await store.listKeys(db, accountId, restrictedTo(auth));
      return rows.map(presentApiKey);
    },

    /** The key's owner, or an owner/admin of the account (or the operator); others: unknown key. */
    async revoke(caller: Caller, accountId: string, keyId: string) {
      const auth = await authorize(caller, accountId, ANY_MEMBER);
      const { actor } = auth;
      const own = restrictedTo(auth);
      return inTransaction(db, async (trx) => {
        await liveAccount(trx, accountId);
        const row = await store.findKey(trx, accountId, keyId);
        if (!row) throw notFound('API key');
        if (own !== null && row.user_id !== own) throw notFound('API key');
        if (row.revoked_at) return presentApiKey(row);
        const now = clock.now().toISOString();
        await store.revokeKeys(trx, [row.id], now, 'revoked');
        await audit(trx, actor, {
          accountId,
          action: 'api_key.revoked',
          targetId: row.id,
          metadata: { name: row.name, keyPrefix: row.key_prefix, ownerChainerId: row.user_id },
        });
        return presentApiKey({ ...row, revoked_at: now });
      });
    },
  };
}
