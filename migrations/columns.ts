import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import { engineOf } from '../src/db/engine.js';

type Column = ['bigint' | 'integer', (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder];

/**
 * An ever-growing integer key (sequence numbers, feed ids): exactly the column SQLite
 * installations already have, `integer primary key autoincrement`, and on PostgreSQL a bigint
 * identity, since kysely's autoIncrement() is MySQL syntax there (docs/postgres.md, Schema).
 */
// Kysely<any>: migrations see the schema as it was, not as src/db/schema.ts has it now.
export function serialKey(db: Kysely<any>): Column {
  return engineOf(db) === 'postgres'
    ? ['bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity()]
    : ['integer', (c) => c.primaryKey().autoIncrement()];
}

/**
 * Money in micros or minor units: SQLite's integer is 64-bit already; PostgreSQL's is 32-bit
 * and would overflow at $2,147 in micros, so bigint there (read back as a number, db/postgres.ts).
 */
// Kysely<any>: migrations see the schema as it was.
export function moneyType(db: Kysely<any>): 'bigint' | 'integer' {
  return engineOf(db) === 'postgres' ? 'bigint' : 'integer';
}
