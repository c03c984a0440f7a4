export interface PostgresServer {
  /** postgres://user@host:port, without a database name. */
  url: string;
  /** The postmaster's pid: its backends fork from it (and inherit, say, its CPU affinity). */
  pid: number;
  stop(): Promise<void>;
  /** For process exit, where nothing can be awaited. */
  stopSync(): void;
}

/**
 * Starts a throwaway PostgreSQL server; throws saying what is missing. `durable` keeps fsync and
 * synchronous commits on, as a deployment runs it (the benchmark); the tests turn them off.
 */
export function startPostgres(options?: { durable?: boolean }): Promise<PostgresServer>;
