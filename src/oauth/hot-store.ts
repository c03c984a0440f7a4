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
  return {
    /** Runs fn in an immediate transaction (the write lock is taken at once, no upgrade deadlock). */
    transaction<T>(fn: () => T): T {
      begin.run();
      try {
        const result = fn();
        commit.run();
        return result;
      } catch (err) {
        if (sqlite.inTransaction) rollback.run();
        throw err;
      }
    },
    findRefreshToken: (tokenHash: string) => find.get(tokenHash),
    consumeRefreshToken: (id: string, at: string) => consume.run(at, id).changes > 0,
    insertRefreshToken: (row: { grant_id: string; token_hash: string; created_at: string; expires_at: string }) =>
      void insert.run(row.token_hash, row.grant_id, row.created_at, row.expires_at),
    /** A kysely transaction is open on the connection: the hot path must wait for it. */
    busy: () => sqlite.inTransaction,
  };
}

export type HotStore = ReturnType<typeof createHotStore>;
