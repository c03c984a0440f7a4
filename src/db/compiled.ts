import { createHash } from 'node:crypto';
import type { Compilable, CompiledQuery } from 'kysely';
import { type Engine, engineOf } from './engine.js';
import type { Executor } from './tx.js';

/** Marks a parameter in the compiled SQL: no value a caller binds starts with NUL. */
const MARK = '\u0000param:';

/** The SQL of every statement compiled once, and the name PostgreSQL prepares it under. */
const preparedNames = new Map<string, string>();

/**
 * A statement built with kysely's query builder and compiled once, then bound to named values
 * on every run (docs/kernel.md, Compiled statements). Building and compiling a large query
 * costs more CPU than running it; a hot statement pays that once, and PostgreSQL parses and
 * plans it once per connection (`preparedName`). `param(name)` stands for a value in the
 * builder; every parameter of the compiled SQL is either one of them or a constant of the
 * query itself, kept as compiled.
 */
export function compileOnce<Name extends string, Row>(
  build: (param: (name: Name) => never) => Compilable<Row>,
): (values: Readonly<Record<Name, unknown>>) => CompiledQuery<Row> {
  // `never` fits wherever the builder expects a value; it is the marker string until compiled.
  const compiled = build((name) => `${MARK}${name}` as never).compile();
  preparedNames.set(compiled.sql, `gantry_${createHash('sha256').update(compiled.sql).digest('hex').slice(0, 32)}`);
  const slots: Array<{ name: Name } | { value: unknown }> = compiled.parameters.map((value) =>
    typeof value === 'string' && value.startsWith(MARK) ? { name: value.slice(MARK.length) as Name } : { value },
  );
  return (values) => ({
    ...compiled,
    parameters: slots.map((slot) => ('name' in slot ? values[slot.name] : slot.value)),
  });
}

/**
 * The name a statement compiled by `compileOnce` is prepared under on PostgreSQL, undefined
 * for any other SQL. A fixed set of statements, so each connection holds a bounded number of
 * prepared statements (postgres.ts).
 */
export const preparedName = (sql: string): string | undefined => preparedNames.get(sql);

/**
 * A hot statement of a store that runs on whatever executor it is given (the database or a
 * transaction): compiled once per engine on first use, then bound and run. The row it
 * answers, or undefined.
 */
export function compiledStatement<Name extends string, Row>(
  build: (db: Executor, param: (name: Name) => never) => Compilable<Row>,
) {
  const byEngine = new Map<Engine, (values: Readonly<Record<Name, unknown>>) => CompiledQuery<Row>>();
  return {
    /** All rows. */
    async rows(executor: Executor, values: Readonly<Record<Name, unknown>>): Promise<Row[]> {
      const engine = engineOf(executor);
      let statement = byEngine.get(engine);
      if (!statement) {
        statement = compileOnce<Name, Row>((param) => build(executor, param));
        byEngine.set(engine, statement);
      }
      return (await executor.executeQuery(statement(values))).rows;
    },
    /** The first row, or undefined. */
    async first(executor: Executor, values: Readonly<Record<Name, unknown>>): Promise<Row | undefined> {
      return (await this.rows(executor, values))[0];
    },
  };
}
