export interface PostgresServer {
  /** postgres://user@host:port, without a database name. */
  url: string;
  stop(): Promise<void>;
  /** For process exit, where nothing can be awaited. */
  stopSync(): void;
}

/** Starts a throwaway PostgreSQL server; throws saying what is missing. */
export function startPostgres(): Promise<PostgresServer>;
