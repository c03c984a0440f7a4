import { AsyncLocalStorage } from 'node:async_hooks';
import { Kysely, type Dialect, type Driver } from 'kysely';
import type { DB } from './schema.js';

/** One open transaction of one database, as seen from the code running inside it. */
interface OpenTransaction {
  pool: object;
  open: boolean;
}

const insideTransactions = new AsyncLocalStorage<readonly OpenTransaction[]>();
/** The pool of each guarded database (its token); a database not in here is not guarded. */
const guarded = new WeakMap<Kysely<DB>, object>();

/** Thrown by a guarded database when a query goes around the open transaction (docs/kernel.md, Transactions). */
export class TransactionGuardError extends Error {
  override name = 'TransactionGuardError';
}

/**
 * A Kysely over `dialect`. With `guard`, a query through this database (not the transaction's
 * executor) from code running inside one of its own open transactions throws: on a pool it
 * waits for a second connection while the transaction holds one, which deadlocks the pool
 * once every connection is held that way; on SQLite it waits for itself (docs/kernel.md,
 * Transactions). Off, nothing is added.
 */
export function openKysely(dialect: Dialect, guard: boolean): Kysely<DB> {
  if (!guard) return new Kysely<DB>({ dialect });
  const pool = {};
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => guardDriver(dialect.createDriver(), pool),
      createIntrospector: (kysely) => dialect.createIntrospector(kysely),
      createQueryCompiler: () => dialect.createQueryCompiler(),
    },
  });
  guarded.set(db, pool);
  return db;
}

function guardDriver(driver: Driver, pool: object): Driver {
  const acquire = driver.acquireConnection.bind(driver);
  // A transaction's own connection is acquired once, before its body runs; every other
  // acquisition is a query on the database itself.
  driver.acquireConnection = () => {
    const open = insideTransactions.getStore()?.some((t) => t.open && t.pool === pool);
    if (!open) return acquire();
    const err = new TransactionGuardError(
      'a query ran on the database (not on the transaction) inside an open transaction of the same pool: pass the transaction to the store function',
    );
    // Also on stderr: a caller that swallows the error must not hide it from the test run.
    process.emitWarning(err);
    return Promise.reject(err);
  };
  return driver;
}

/** Runs a transaction's body marked as inside it, when db is guarded (src/db/tx.ts). */
export function insideTransaction<T>(db: Kysely<DB>, body: () => Promise<T>): Promise<T> {
  const pool = guarded.get(db);
  if (!pool) return body();
  const mark: OpenTransaction = { pool, open: true };
  return insideTransactions.run([...(insideTransactions.getStore() ?? []), mark], async () => {
    try {
      return await body();
    } finally {
      // Work the body left running past its end no longer counts as inside.
      mark.open = false;
    }
  });
}
