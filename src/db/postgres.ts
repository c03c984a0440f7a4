import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { preparedName } from './compiled.js';
import type { DbHandle } from './handle.js';
import type { DB } from './schema.js';
import { openKysely } from './transaction-guard.js';

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * pg hands int8 (bigint ids, money in micros, count(*)) and numeric (sum of a bigint) back as
 * strings; the code computes with numbers, as on SQLite. Values past 2^53 would lose digits, so
 * they fail loudly instead (a wallet holds at most 9 billion dollars in micros).
 */
function toSafeNumber(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER)
    throw new RangeError(`database value ${text} does not fit a JavaScript number`);
  return value;
}

/**
 * node-postgres, loaded on first use and left out of the bundle (build.mjs): a server on
 * SQLite never loads it (docs/operations.md, Memory).
 */
export const loadPg = () => import('pg').then((mod) => mod.default);

/**
 * A pool of connections to PostgreSQL (docs/postgres.md). Unlike SQLite's single connection,
 * transactions here run side by side: src/db/tx.ts makes them SERIALIZABLE and retries.
 */
export function openPostgres(
  url: string,
  options: { maxConnections?: number; connectWaitMs?: number; guardTransactions?: boolean } = {},
): DbHandle {
  // A query waiting longer than connectWaitMs for a free connection fails instead of waiting
  // forever: a pool worn out by a burst answers errors, and recovers, rather than hang.
  // The pool is made when the first query needs it (kysely awaits this once).
  const pool = async () => {
    const pg = await loadPg();
    const created = new pg.Pool({
      Client: preparingClient(pg.Client),
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectWaitMs ?? 30_000,
      types: {
        getTypeParser(oid: number, format?: 'text' | 'binary') {
          if (oid === INT8_OID || oid === NUMERIC_OID) return toSafeNumber;
          return pg.types.getTypeParser(oid, format);
        },
      },
    });
    // An idle client losing its server (restart, network) must not crash the process; the pool
    // drops it and the next query opens a new one.
    created.on('error', () => {});
    return created;
  };
  const db = openKysely(new PostgresDialect({ pool }), options.guardTransactions === true);
  let closed = false;
  return {
    engine: 'postgres',
    db,
    sqlite: null,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy(); // ends the pool
    },
  };
}

/**
 * pg's client, except that a statement compiled once (compiled.ts) runs as a named prepared
 * statement: PostgreSQL parses and plans it on a connection's first use only, which for the
 * refresh grant's statement was most of the database's CPU time per request (docs/postgres.md,
 * Benchmarks). Kysely's driver hands the client SQL text and values; everything else passes
 * through unchanged.
 */
function preparingClient(Client: typeof pg.Client): typeof pg.Client {
  return class PreparingClient extends Client {
    // pg's query() has many overloads; this one only adds a name to a text query.
    override query(...args: any[]): any {
      const [text, values, callback] = args;
      const name = typeof text === 'string' ? preparedName(text) : undefined;
      if (name === undefined) return (super.query as (...a: unknown[]) => unknown)(...args);
      return (super.query as (...a: unknown[]) => unknown)({ name, text, values }, callback);
    }
  };
}

/** The database's size on disk as PostgreSQL counts it (tables, indexes, TOAST), for the metrics. */
export async function databaseSize(db: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ bytes: number }>`select pg_database_size(current_database()) as bytes`.execute(db);
  return rows[0]?.bytes ?? 0;
}
