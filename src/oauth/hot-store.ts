import type SqliteDatabase from 'better-sqlite3';
import type { Database } from '../db/connection.js';
import type { ResourceKind } from './resources.js';
import * as store from './store/index.js';

export interface HotRefreshRow {
  id: string;
  grant_id: string;
  expires_at: string;
  consumed_at: string | null;
  client_id: string;
  user_id: string;
  scopes: string;
  resource: ResourceKind;
  workspace_id: string | null;
  revoked_at: string | null;
}

/**
 * The refresh_token grant's statements, built with kysely's typed query builder once and
 * prepared once on the raw connection, so they run synchronously inside one better-sqlite3
 * transaction that nothing else can interleave with. Same tables and columns as store.ts;
 * everything that is not this hot path goes through store.ts.
 */
/** The hot path could not run: a kysely transaction held the connection. */
export const BUSY: unique symbol = Symbol('busy');

// Placeholder values: only the compiled SQL is kept; real values are bound on every run.
const P = '';

type RefreshInsert = { grant_id: string; token_hash: string; created_at: string; expires_at: string };

interface HotStore {
  run<T>(fn: () => T): Promise<T | typeof BUSY>;
  findRefreshToken(tokenHash: string): HotRefreshRow | undefined;
  consumeRefreshToken(id: string, at: string): boolean;
  insertRefreshToken(row: RefreshInsert): void;
}

/**
 * On PostgreSQL there is no synchronous connection: every call answers BUSY, and the grant
 * takes its ordinary transactional path (docs/postgres.md, Transactions).
 */
const NO_HOT_PATH: HotStore = {
  run: () => Promise.resolve(BUSY),
  findRefreshToken: () => undefined,
  consumeRefreshToken: () => false,
  insertRefreshToken: () => {},
};

export function createHotStore(db: Database, raw: SqliteDatabase.Database | null): HotStore {
  if (!raw) return NO_HOT_PATH;
  const sqlite = raw;
  const prepare = <R>(query: { compile(): { sql: string } }) => sqlite.prepare<unknown[], R>(query.compile().sql);
  const find = prepare<HotRefreshRow>(store.refreshTokenQuery(db, P));
  // Parameters in order: consumed_at, token_hash.
  const consume = prepare(
    db
      .updateTable('oauth_refresh_tokens')
      .set({ consumed_at: P })
      .where('token_hash', '=', P)
      .where('consumed_at', 'is', null),
  );
  // Parameters in order: token_hash, grant_id, created_at, expires_at.
  const insert = prepare(
    db.insertInto('oauth_refresh_tokens').values({ token_hash: P, grant_id: P, created_at: P, expires_at: P }),
  );
  const begin = sqlite.prepare('begin immediate');
  const commit = sqlite.prepare('commit');
  const rollback = sqlite.prepare('rollback');
  const savepoint = sqlite.prepare('savepoint hot_item');
  const release = sqlite.prepare('release hot_item');
  const rollbackItem = sqlite.prepare('rollback to hot_item');

  interface Pending {
    fn: () => unknown;
    resolve(value: unknown): void;
    reject(err: unknown): void;
  }
  let queue: Pending[] = [];
  let scheduled = false;

  /**
   * Group commit: the work queued during one turn of the event loop runs in one transaction,
   * each item in its own savepoint, and every caller hears back after the COMMIT. One commit
   * (and one set of WAL frames) per batch instead of per request; an item still sees the
   * writes of the items before it, so two uses of one refresh token in a batch are a reuse.
   */
  function flush(): void {
    scheduled = false;
    const batch = queue;
    queue = [];
    if (sqlite.inTransaction) {
      // A kysely transaction holds the connection across awaits: those callers take the ordinary path.
      for (const item of batch) item.resolve(BUSY);
      return;
    }
    const settled: Array<{ item: Pending; ok: boolean; value: unknown }> = [];
    begin.run();
    try {
      for (const item of batch) {
        savepoint.run();
        try {
          const value = item.fn();
          release.run();
          settled.push({ item, ok: true, value });
        } catch (err) {
          rollbackItem.run();
          release.run();
          settled.push({ item, ok: false, value: err });
        }
      }
      commit.run();
    } catch (err) {
      if (sqlite.inTransaction) rollback.run();
      for (const item of batch) item.reject(err);
      return;
    }
    for (const { item, ok, value } of settled) (ok ? item.resolve : item.reject)(value);
  }

  return {
    /** Runs fn in the next group-committed transaction; BUSY when the connection was taken. */
    run<T>(fn: () => T): Promise<T | typeof BUSY> {
      return new Promise((resolve, reject) => {
        queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    findRefreshToken: (tokenHash: string) => find.get(tokenHash),
    consumeRefreshToken: (id: string, at: string) => consume.run(at, id).changes > 0,
    insertRefreshToken: (row: RefreshInsert) =>
      void insert.run(row.token_hash, row.grant_id, row.created_at, row.expires_at),
  };
}
