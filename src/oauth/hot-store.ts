import type SqliteDatabase from 'better-sqlite3';

export interface HotRefreshRow {
  id: string;
  grant_id: string;
  expires_at: string;
  consumed_at: string | null;
  client_id: string;
  user_id: string;
  scopes: string;
  revoked_at: string | null;
}

/**
 * The refresh_token grant's statements, prepared once on the raw connection. Kysely prepares
 * every statement anew (about a third of a refresh's cost); these run inside one synchronous
 * better-sqlite3 transaction, which nothing else can interleave with. Same tables and columns
 * as store.ts; everything that is not this hot path goes through store.ts.
 */
/** The hot path could not run: a kysely transaction held the connection. */
export const BUSY: unique symbol = Symbol('busy');

export function createHotStore(sqlite: SqliteDatabase.Database) {
  const find = sqlite.prepare<[string], HotRefreshRow>(
    `select r.token_hash as id, r.grant_id, r.expires_at, r.consumed_at, g.client_id, g.user_id, g.scopes, g.revoked_at
       from oauth_refresh_tokens r join oauth_grants g on g.id = r.grant_id where r.token_hash = ?`,
  );
  const consume = sqlite.prepare<[string, string]>('update oauth_refresh_tokens set consumed_at = ? where token_hash = ? and consumed_at is null');
  const insert = sqlite.prepare<[string, string, string, string]>(
    'insert into oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at, consumed_at) values (?, ?, ?, ?, null)',
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
    insertRefreshToken: (row: { grant_id: string; token_hash: string; created_at: string; expires_at: string }) =>
      void insert.run(row.token_hash, row.grant_id, row.created_at, row.expires_at),
  };
}

export type HotStore = ReturnType<typeof createHotStore>;
